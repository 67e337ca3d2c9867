//! What the eras keep on sessions, on calls and on our requests, as one closed set of types
//! ([`Eras`]): the host stores them without looking inside, and each era reaches only its
//! own part. With `era/mod.rs`, the one place that names every era.

use super::v2025_11_25::kept as v2025;
use super::v2026_07_28::kept as v2026;
use crate::model::Era;
use crate::state::{self, Kept, Protocol};

/// The eras' kept types, for the host's state.
#[derive(Debug)]
pub(crate) struct Eras;

/// The host's state, with what the eras keep.
pub(crate) type State = state::State<Eras>;
/// A session, with what the eras keep on it.
pub(crate) type Session = state::Session<Eras>;
/// A call, with what its era keeps on it.
pub(crate) type Call = state::Call<Eras>;
/// Who sent one of our requests, and why.
pub(crate) type Sent = state::Sent<Eras>;

/// Each era's part of the host's state.
#[derive(Debug, Default)]
pub(crate) struct HostKept {
    pub(super) v2026_07_28: v2026::HostState,
}

/// Each era's part of a session, made when the era first needs it (a session may serve
/// both eras).
#[derive(Debug, Default)]
pub(crate) struct SessionKept {
    pub(super) v2025_11_25: Option<Box<v2025::SessionState>>,
    pub(super) v2026_07_28: Option<Box<v2026::SessionState>>,
}

/// The call's era's part of a call.
#[derive(Debug, Default)]
pub(crate) struct CallKept {
    pub(super) v2025_11_25: Option<Box<v2025::CallState>>,
    pub(super) v2026_07_28: Option<Box<v2026::CallState>>,
}

/// Why an era sent one of our requests (that era reads the answer).
#[derive(Debug)]
pub(crate) enum Purpose {
    V2025_11_25(v2025::Asked),
    V2026_07_28(v2026::Asked),
}

impl From<v2025::Asked> for Purpose {
    fn from(asked: v2025::Asked) -> Self {
        Purpose::V2025_11_25(asked)
    }
}

impl From<v2026::Asked> for Purpose {
    fn from(asked: v2026::Asked) -> Self {
        Purpose::V2026_07_28(asked)
    }
}

impl Kept for Eras {
    type Host = HostKept;
    type Session = SessionKept;
    type Call = CallKept;
    type Purpose = Purpose;

    fn era_of(purpose: &Purpose) -> Era {
        match purpose {
            Purpose::V2025_11_25(_) => Era::V2025_11_25,
            Purpose::V2026_07_28(_) => Era::V2026_07_28,
        }
    }

    fn protocol(era: Era) -> &'static dyn Protocol<Eras> {
        super::protocol(era)
    }
}
