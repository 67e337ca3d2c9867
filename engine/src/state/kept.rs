//! What the eras keep on sessions, on calls and on our requests: types the era layer names
//! (one closed set over the eras), which this layer stores without looking inside.

use std::fmt;

use super::Protocol;
use crate::model::Era;

/// The types the eras keep, and their rules.
pub(crate) trait Kept: Sized + fmt::Debug + 'static {
    /// What the eras keep for the whole host (what they learned from earlier requests).
    type Host: Default + Send + fmt::Debug;
    /// What the eras keep on a session (each era's part made when it first needs it).
    type Session: Default + Send + fmt::Debug;
    /// What the eras keep on a call.
    type Call: Default + Send + fmt::Debug;
    /// Why an era sent one of our requests: it reads the answer.
    type Purpose: Send + fmt::Debug;

    /// The era that sent a request for `purpose`.
    fn era_of(purpose: &Self::Purpose) -> Era;

    /// The rules of `era`.
    fn protocol(era: Era) -> &'static dyn Protocol<Self>;
}
