//! Protocol eras behind one seam.
//!
//! The host (`state/`) is era-neutral: task records, outcomes (stored raw), the transition
//! table, owners, quotas, calls, sessions, expiry, our requests and the journal. An era
//! owns the rest: decoding its requests, its rules (error codes, capability JSON, how an
//! `isError` result reads, cancel semantics, related-task `_meta`), encoding tasks and
//! outcomes in its shapes, and the state it keeps on sessions and calls.
//!
//! Each era implements the host's `Protocol` trait in its own module ([`v2025_11_25`],
//! [`v2026_07_28`]); neither imports the other. This file and `kept.rs` are the places that
//! name them all: `protocol` maps an [`Era`] to its rules, `route_request` says which era
//! reads a request on a session, and `kept.rs` gathers what each era keeps (its session,
//! call and request types, checked by the compiler: no `dyn Any`). A new era is a new
//! module, its [`Era`] variant, and its arms here and in `kept.rs`.

mod kept;
pub mod v2025_11_25;
pub mod v2026_07_28;

pub(crate) use kept::{Call, Eras, Sent, State};
pub(crate) use v2025_11_25::list_cursor;

use serde_json::value::RawValue;

use crate::error::UsageError;
use crate::ids::SessionId;
use crate::jsonrpc::{Params, Reject, RequestId, RpcError};
use crate::model::{Era, Notice, Role};
use crate::peer_error::PeerErrorKind;
use crate::state::{Phase, Protocol};

/// The era a task the application makes itself ([`Host::create_task`](crate::Host)) is
/// created in: the one whose `tasks/list` lists it.
pub(crate) const APP_TASKS: Era = Era::V2025_11_25;

/// The era that serves protocol version `version`: each era's own version, and the older
/// ones an era still speaks (2025-11-25 serves `2025-06-18`, `2025-03-26`, `2024-11-05`).
pub fn serving_version(version: &str) -> Option<Era> {
    if v2025_11_25::SUPPORTED_VERSIONS.contains(&version) {
        Some(Era::V2025_11_25)
    } else if version == v2026_07_28::VERSION {
        Some(Era::V2026_07_28)
    } else {
        None
    }
}

/// The rules of `era`.
pub(crate) fn protocol(era: Era) -> &'static dyn Protocol<Eras> {
    match era {
        Era::V2025_11_25 => &v2025_11_25::V2025_11_25,
        Era::V2026_07_28 => &v2026_07_28::V2026_07_28,
    }
}

/// Sends a server's notice on `session`: in 2025-11-25 once its handshake is done, in
/// 2026-07-28 (a session without one) on the listen streams that asked for it.
pub(crate) fn send_notice(
    st: &mut State,
    session: SessionId,
    notice: &Notice,
) -> Result<(), UsageError> {
    match st.session(session).map(|s| &s.phase) {
        Some(Phase::Ready { .. }) => {
            v2025_11_25::notices::send(st, session, notice);
            Ok(())
        }
        Some(Phase::Initializing) => Err(UsageError::NotInitialized(session)),
        _ => {
            v2026_07_28::listen::notify(st, session, notice);
            Ok(())
        }
    }
}

/// Whether the per-request era (2026-07-28) reads a request on a server session:
/// `server/discover`, and any request naming its protocol version. The caller's check of
/// any other request sees its method only ([`State::check_method`]).
pub(crate) fn per_request(method: &str, params: Option<&str>) -> bool {
    method == "server/discover" || v2026_07_28::names_version(params)
}

/// Whether `ping` is answered with `{}`: in every era but 2026-07-28, which removed it (a
/// request carrying that era's `_meta` version goes to [`route_request`], which refuses it).
pub(crate) fn answers_ping(params: Option<&str>) -> bool {
    !v2026_07_28::names_version(params)
}

/// Serves a peer request (not `ping`, which the eras that have it answer alike). A client session's
/// requests go to the era it speaks (the oldest before it opens); on a server session the
/// newest era that claims a request reads it: 2026-07-28 claims `server/discover` and every
/// request carrying its per-request protocol version, 2025-11-25 `initialize` and whatever
/// follows it. A request no era claims is one of 2026-07-28 missing its `_meta`, or one sent
/// before `initialize` (checklist 2026 §3.1 r4). Unchecked params are checked by the era
/// that reads them whole (2026-07-28's, on a server session) or before any other era sees
/// them: `None` (nothing answered) when they are no single JSON value.
pub(crate) fn route_request(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    method: &str,
    params: Params<'_>,
) -> Option<Result<(), Reject>> {
    let Some(s) = st.session(session) else {
        return Some(Ok(()));
    };
    let (eras, mut checked) = match (s.role, s.era) {
        (Role::Server, _) => (&Era::ALL[..], params.checked()),
        (Role::Client, era) => (
            only(era.unwrap_or(Era::ALL[Era::ALL.len() - 1])),
            Some(params.check()?),
        ),
    };
    for &era in eras {
        let served = match (era, checked, params) {
            (_, Some(params), _) => protocol(era).serve(st, session, id, method, params),
            (Era::V2026_07_28, None, Params::Unchecked(text)) => {
                v2026_07_28::serve_unchecked(st, session, id, method, text)
            }
            (_, None, _) => {
                let params = params.check()?;
                checked = Some(params);
                protocol(era).serve(st, session, id, method, params)
            }
        };
        if let Some(served) = served {
            return Some(served);
        }
    }
    params.check()?;
    Some(Err(Reject::peer(
        PeerErrorKind::InvalidParams {
            field: Some("_meta".into()),
        },
        RpcError::invalid_params(format!(
            "Invalid params: {method} without params._meta[\"{}\"]; send initialize \
             first to speak 2025-11-25",
            v2026_07_28::VERSION_KEY
        )),
    )))
}

/// Reads a notification in the eras of the session (a client session's own; every era on
/// a server session). Whether one of them read it.
pub(crate) fn route_notification(
    st: &mut State,
    session: SessionId,
    method: &str,
    params: Option<&RawValue>,
) -> bool {
    let Some(s) = st.session(session) else {
        return true;
    };
    let eras = match (s.role, s.era) {
        (Role::Client, Some(era)) => only(era),
        _ => &Era::ALL[..],
    };
    eras.iter()
        .any(|&era| protocol(era).notify(st, session, method, params))
}

/// `era` alone, as a slice of [`Era::ALL`].
fn only(era: Era) -> &'static [Era] {
    let at = Era::ALL.iter().position(|&e| e == era).unwrap_or_default();
    &Era::ALL[at..=at]
}
