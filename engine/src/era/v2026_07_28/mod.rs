//! MCP 2026-07-28 with the tasks extension `io.modelcontextprotocol/tasks` (server role).
//!
//! Requests are stateless: each carries its protocol version and client capabilities in
//! `params._meta`, there is no `initialize`, and `server/discover` says what we
//! serve. Every result has `resultType`. A `tools/call` becomes a task only when that
//! request declares the extension (the tool's policy decides); the `CreateTaskResult` is
//! flat; `tasks/get` inlines the outcome; `tasks/cancel` and `tasks/update` are acks;
//! `tasks/result` and `tasks/list` do not exist. A tool result with `isError: true` reads
//! as `completed`; `failed` carries the JSON-RPC error.
//!
//! Checks run in the order the spec's decisions fix: `_meta` (-32602) and version
//! (-32022), method (-32601), extension declared (-32021), params (-32602), task lookup.
//! Input ([`Host::request_input`]): a task lists it in `tasks/get` as `inputRequests`,
//! answered by `tasks/update`; a plain call answers its request with an
//! `InputRequiredResult` (MRTR) and its retry carries the answers. `subscriptions/listen`
//! with `notifications.taskIds` streams `notifications/tasks`.
//!
//! Client role: [`Host::initialize`] opens with `server/discover` (or falls back to
//! `initialize`, per [`ClientEra`](crate::ClientEra)); every request carries the `_meta`,
//! declaring the extension except on a plain `tools/call`; a `tools/call` answer is read by
//! its `resultType` (a result, MRTR rounds answered by the application's input handlers, or
//! a task); a task is polled with `tasks/get` at its `pollIntervalMs`, its `inputRequests`
//! go to the same handlers and back by `tasks/update`, and its outcome comes inline.

mod encode;
mod following;
mod input;
mod listen;
mod meta;
mod requestor;
mod tasks;
mod tools;

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

pub(crate) use encode::plain_reply;
pub(crate) use meta::VERSION_KEY;
pub(crate) use requestor::{with_meta, Answering, ModernCall, Retry};

use crate::error::PeerErrorKind;
use crate::host::Host;
use crate::ids::SessionId;
use crate::jsonrpc::{Reject, RequestId, RpcError};
use crate::session::Purpose;
use crate::task::Era;
use meta::RequestMeta;

/// The protocol version this era serves statelessly.
pub const VERSION: &str = "2026-07-28";
/// The tasks extension's identifier.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// How long a client may cache `server/discover` and `tools/list` (ms).
const CACHE_TTL_MS: u64 = 60_000;

impl Host {
    /// The answer to a request of ours on a client session of this era.
    pub(crate) fn modern_answer(
        &mut self,
        session: SessionId,
        id: RequestId,
        purpose: Purpose,
        outcome: Result<Value, RpcError>,
    ) {
        match purpose {
            Purpose::Discover { fallback } => self.on_discover_answer(session, fallback, outcome),
            Purpose::ModernCall(call) => self.on_modern_call_answer(session, id, *call, outcome),
            Purpose::TaskGet { task, auto } => {
                let report = (!auto).then(|| id.clone());
                self.on_detailed_task(session, id, task, report, outcome)
            }
            Purpose::AfterCancel { task, original } => {
                self.on_detailed_task(session, id, task, Some(original), outcome)
            }
            Purpose::TaskCancel { task } => match outcome {
                Ok(_) => self.after_cancel_ack(session, task, id),
                Err(error) => self.event(crate::Event::Response {
                    session,
                    request: id,
                    outcome: Err(error),
                }),
            },
            Purpose::Ack { task } => self.on_ack(session, &task, outcome),
            Purpose::Listen { task } => self.listen_ended(session, &task, &id),
            shared => self.on_answer(session, id, shared, outcome),
        }
    }

    /// A request on a server session (which may also speak 2025-11-25), if it is of this
    /// era: `server/discover`, or any request carrying the per-request protocol version.
    /// `None` leaves it to 2025-11-25.
    pub(crate) fn modern_request(
        &mut self,
        session: SessionId,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> Option<Result<(), Reject>> {
        let meta = RequestMeta::of_request(method, params)?;
        Some(meta.and_then(|meta| self.serve_modern(session, id, method, params, &meta)))
    }

    fn serve_modern(
        &mut self,
        session: SessionId,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
        meta: &RequestMeta,
    ) -> Result<(), Reject> {
        match method {
            "server/discover" => self.on_discover(session, id),
            "tools/list" => self.modern_tools_list(session, id, params),
            "tools/call" => self.modern_tools_call(session, id, params, meta),
            "tasks/get" => self.modern_tasks_get(session, id, params, meta),
            "tasks/cancel" => self.modern_tasks_cancel(session, id, params, meta),
            "tasks/update" => self.modern_tasks_update(session, id, params, meta),
            "subscriptions/listen" => self.on_listen(session, id, params, meta),
            _ if !method.starts_with("tasks/")
                && !matches!(method, "initialize" | "ping")
                && !method.starts_with("tools/")
                && self.config.app_serves(method) =>
            {
                let (era, level) = (Era::V2026_07_28, meta.log_level);
                self.app_request(session, id, method, params, era, level);
                Ok(())
            }
            _ => Err(Reject::peer(
                PeerErrorKind::UnknownMethod(method.to_owned()),
                RpcError::method_not_found(method),
            )),
        }
    }

    /// `server/discover`: the versions we serve statelessly and our capabilities, the
    /// tasks extension among them when tasks are on (never the legacy `tasks` key).
    fn on_discover(&mut self, session: SessionId, id: &RequestId) -> Result<(), Reject> {
        let mut capabilities = Map::new();
        capabilities.insert("tools".into(), json!({}));
        if self.config.logging {
            capabilities.insert("logging".into(), json!({}));
        }
        for (key, value) in &self.config.app_capabilities {
            capabilities
                .entry(key.clone())
                .or_insert_with(|| value.clone());
        }
        if self.config.tasks.enabled {
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
        if let Some(instructions) = &self.config.instructions {
            fields.insert("instructions".into(), instructions.clone().into());
        }
        fields.insert("ttlMs".into(), CACHE_TTL_MS.into());
        fields.insert("cacheScope".into(), "public".into());
        let line = encode::complete_line(id, fields, &self.config.info);
        self.reply(session, id, None, line);
        Ok(())
    }
}
