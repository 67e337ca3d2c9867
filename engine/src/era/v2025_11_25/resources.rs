//! Resource subscriptions in this era: when the application's `resources` declares
//! `subscribe`, the engine answers `resources/subscribe` and `resources/unsubscribe` itself,
//! keeps each session's resources, reports them (`Event::ResourceSubscriptions`, as for a
//! 2026-07-28 listen stream), and sends a resource's updates only to the sessions subscribed.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::state as kept;
use crate::era::kept::State;
use crate::event::Event;
use crate::ids::SessionId;
use crate::jsonrpc::{self, Reject, RequestId};

#[derive(Deserialize)]
struct UriParams {
    uri: String,
}

/// Whether the engine keeps this server's resource subscriptions.
pub(super) fn kept_by_engine(st: &State) -> bool {
    st.config.app_declares("resources", "subscribe")
}

/// `resources/subscribe` (`subscribe`) or `resources/unsubscribe`: the session's resources
/// changed (reported when they did), answered `{}`.
pub(super) fn on_subscribe(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    params: Option<&RawValue>,
    subscribe: bool,
) -> Result<(), Reject> {
    let UriParams { uri } = jsonrpc::params(params)?;
    let mut changed = None;
    if let Some(s) = kept::session_mut(st, session) {
        let had = s.resources.iter().position(|u| *u == uri);
        match (subscribe, had) {
            (true, None) => s.resources.push(uri),
            (false, Some(at)) => {
                s.resources.remove(at);
            }
            _ => {}
        }
        if subscribe != had.is_some() {
            changed = Some(s.resources.clone());
        }
    }
    let line = jsonrpc::reply_with(id, 48, |buf| buf.push_str("{}"));
    st.reply(session, id, None, line);
    if let Some(uris) = changed {
        st.event(Event::ResourceSubscriptions { session, uris });
    }
    Ok(())
}

/// Whether the session subscribed to `uri`.
pub(super) fn subscribed(st: &State, session: SessionId, uri: &str) -> bool {
    let kept = st
        .session(session)
        .and_then(|s| s.kept.v2025_11_25.as_deref());
    kept.is_some_and(|s| s.resources.iter().any(|u| u == uri))
}
