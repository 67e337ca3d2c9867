//! The requests this era reads: on a server session, `server/discover` and every request
//! carrying this era's per-request protocol version (its params and `_meta` read in one
//! pass, the `_meta` checked before the method); on a client session of this era, none (a
//! server of this era sends no request).

use serde_json::{json, Map, Value};

use super::meta::{names_version, read, MetaOnly, Read, RequestMeta, Stateless};
use super::state as kept;
use super::{encode, listen, tasks, tools, CACHE_TTL_MS, EXTENSION, VERSION};
use crate::era::kept::State;
use crate::ids::SessionId;
use crate::jsonrpc::{Params, Reject, RequestId, RpcError};
use crate::model::{Era, Role};
use crate::peer_error::PeerErrorKind;
use crate::routed::Routed;

/// Serves a request of this era whose params are unchecked text (checked as they are read);
/// `None` when it is not one, or its params must be checked first.
pub(in crate::era) fn serve_unchecked(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    method: &str,
    params: &str,
) -> Option<Result<(), Reject>> {
    serve(st, session, id, method, Params::Unchecked(params))
}

/// Serves a request of this era; `None` leaves it to an older era (or, with unchecked
/// params, to be checked first).
pub(super) fn serve(
    st: &mut State,
    session: SessionId,
    id: &RequestId,
    method: &str,
    params: Params<'_>,
) -> Option<Result<(), Reject>> {
    if st.session(session)?.role == Role::Client {
        return Some(Err(unknown(method)));
    }
    let text = params.text();
    // Most requests of a 2025-11-25 session never name this era's version: let them go at
    // once, before anything else is read.
    if !crate::era::per_request(method, text) {
        return None;
    }
    match method {
        "server/discover" => with::<MetaOnly>(st, method, text, true, |st, _, _| {
            on_discover(st, session, id)
        }),
        "tools/list" => with(st, method, text, false, |st, fields, _| {
            tools::on_tools_list(st, session, id, fields?)
        }),
        "tools/call" => with(st, method, text, false, |st, fields, meta| {
            tools::on_tools_call(st, session, id, fields?, &meta)
        }),
        "tasks/get" => with(st, method, text, false, |st, fields, meta| {
            tasks::on_tasks_get(st, session, id, fields, &meta)
        }),
        "tasks/cancel" => with(st, method, text, false, |st, fields, meta| {
            tasks::on_tasks_cancel(st, session, id, fields, &meta)
        }),
        "tasks/update" => with(st, method, text, false, |st, fields, meta| {
            tasks::on_tasks_update(st, session, id, fields, &meta)
        }),
        "subscriptions/listen" => with(st, method, text, false, |st, fields, meta| {
            listen::on_listen(st, session, id, fields?, &meta)
        }),
        _ => {
            // The application gets its params checked (text that is no JSON value is
            // no request of this era: the host reads the line again).
            let params = params.check()?;
            with::<MetaOnly>(st, method, text, false, |st, _, meta| {
                if owned_by_engine(method) || !st.config.app_serves(method) {
                    return Err(unknown(method));
                }
                let call = st.app_request(Era::V2026_07_28, session, id, method, params);
                if let Some(state) = st.call_mut(call) {
                    kept::of_call(state).log_level = meta.log_level;
                }
                Ok(())
            })
        }
    }
}

/// Reads the params as `P` and serves them with `serve`, if the request is of this era and
/// the caller's check lets it be served.
fn with<P: Stateless>(
    st: &mut State,
    method: &str,
    params: Option<&str>,
    discover: bool,
    serve: impl FnOnce(&mut State, Result<P, Reject>, RequestMeta) -> Result<(), Reject>,
) -> Option<Result<(), Reject>> {
    let read = read::<P>(params, discover, &mut st.kept.v2026_07_28.last_meta);
    let checked = match &read {
        // Without a check, nothing more is read.
        _ if st.check.is_none() => Ok(()),
        // Read whole: the params are JSON.
        Read::Fields(Ok(fields), _) => check(st, method, version(params), Some(fields)),
        // A check is shown only JSON (a line that is none gets -32700, or the error read).
        _ if !is_json(params) => Ok(()),
        Read::Fields(Err(_), _) => check::<P>(st, method, version(params), None),
        // Another era's: the check sees the method only.
        Read::NotOurs | Read::Refused(_) => st.check_method(method),
    };
    if let Err(reject) = checked {
        return Some(Err(reject));
    }
    match read {
        Read::NotOurs => None,
        Read::Refused(reject) => Some(Err(reject)),
        Read::Fields(fields, meta) => Some(serve(st, fields, meta)),
    }
}

/// The version a request names (`server/discover` may name none).
fn version(params: Option<&str>) -> Option<&'static str> {
    names_version(params).then_some(VERSION)
}

/// Whether params text is one JSON value (read without building it).
fn is_json(params: Option<&str>) -> bool {
    params.is_none_or(|text| serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok())
}

/// The caller's check of a request this era read
/// ([`Host::handle_checked`](crate::Host::handle_checked)); `Ok` without one.
fn check<P: Stateless>(
    st: &mut State,
    method: &str,
    protocol_version: Option<&str>,
    fields: Option<&P>,
) -> Result<(), Reject> {
    let Some(check) = st.check.as_mut() else {
        return Ok(());
    };
    let name = fields.and_then(|f| f.name(method));
    let tool = match method {
        "tools/call" => name.and_then(|name| st.tools.get(name)),
        _ => None,
    };
    let routed = Routed {
        method,
        protocol_version,
        name,
        tool,
        arguments: fields.and_then(P::arguments),
    };
    check(&routed).map_err(Reject::from)
}

fn unknown(method: &str) -> Reject {
    Reject::peer(
        PeerErrorKind::UnknownMethod(method.to_owned()),
        RpcError::method_not_found(method),
    )
}

/// Methods the engine answers itself in this era, whatever the application lists.
fn owned_by_engine(method: &str) -> bool {
    matches!(method, "initialize" | "ping")
        || method.starts_with("tools/")
        || method.starts_with("tasks/")
}

/// `server/discover`: the versions we serve statelessly and our capabilities, the tasks
/// extension among them when tasks are on (never the 2025-11-25 `tasks` key).
fn on_discover(st: &mut State, session: SessionId, id: &RequestId) -> Result<(), Reject> {
    let mut capabilities = Map::new();
    let tools = match st.config.tools_list_changed {
        true => json!({ "listChanged": true }),
        false => json!({}),
    };
    capabilities.insert("tools".into(), tools);
    if st.config.logging {
        capabilities.insert("logging".into(), json!({}));
    }
    for (key, value) in &st.config.app_capabilities {
        capabilities
            .entry(key.clone())
            .or_insert_with(|| value.clone());
    }
    if st.config.tasks.enabled {
        let extensions = capabilities
            .entry("extensions")
            .or_insert_with(|| json!({}));
        if let Value::Object(extensions) = extensions {
            extensions.insert(EXTENSION.into(), json!({}));
        }
    }
    let mut fields = Map::new();
    fields.insert("supportedVersions".into(), json!([VERSION]));
    fields.insert("capabilities".into(), Value::Object(capabilities));
    if let Some(instructions) = &st.config.instructions {
        fields.insert("instructions".into(), instructions.clone().into());
    }
    fields.insert("ttlMs".into(), CACHE_TTL_MS.into());
    fields.insert("cacheScope".into(), "public".into());
    let line = encode::complete_line(id, fields, &st.config.info);
    st.reply(session, id, None, line);
    Ok(())
}
