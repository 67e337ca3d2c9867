//! MCP 2025-11-25: tasks in the core protocol (experimental).
//!
//! A session of this era starts with `initialize`; task-augmented requests carry
//! `params.task`; `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` serve them;
//! `notifications/tasks/status` reports changes; input is asked with `elicitation/create`
//! and `sampling/createMessage` requests carrying related-task `_meta`. A tool result with
//! `isError: true` reads as `failed`; `tasks/cancel` of a terminal task is -32602.

mod encode;
mod handshake;
mod logging;
mod negotiation;
mod polling;
mod receiver;
mod requestor;
mod tools;
mod types;

use serde_json::value::RawValue;

pub use negotiation::PlainReason;
pub(crate) use negotiation::ToolCatalog;
pub(crate) use polling::{RemoteTask, Source};
pub(crate) use tools::Tools;
pub use tools::{TaskDecision, ToolDef};
pub use types::*;

use crate::error::PeerErrorKind;
use crate::host::Host;
use crate::ids::SessionId;
use crate::jsonrpc::{self, Reject, RequestId, RpcError};
use crate::session::Role;

impl Host {
    /// A request on a session of this era (`ping` is answered before it gets here).
    pub(crate) fn legacy_request(
        &mut self,
        session: SessionId,
        id: &RequestId,
        method: &str,
        params: Option<&RawValue>,
    ) -> Result<(), Reject> {
        let s = self
            .session(session)
            .expect("routed requests have a session");
        let (role, ready) = (s.role, s.is_ready());
        if role == Role::Server && method == "initialize" {
            return self.on_initialize(session, id, params);
        }
        // A dual-era server reads a request that neither follows initialize nor carries the
        // 2026-07-28 `_meta` as a modern one missing it (checklist 2026 §3.1 r4).
        if !ready && role == Role::Server {
            return Err(Reject::peer(
                PeerErrorKind::InvalidParams {
                    field: Some("_meta".into()),
                },
                RpcError::invalid_params(format!(
                    "Invalid params: {method} without params._meta[\"{}\"]; send initialize \
                     first to speak 2025-11-25",
                    crate::era::v2026_07_28::VERSION_KEY
                )),
            ));
        }
        if !ready {
            return Err(Reject::peer(
                PeerErrorKind::BeforeInitialize,
                RpcError::invalid_request(format!(
                    "Invalid Request: {method} before initialization completed"
                )),
            ));
        }
        let hosts_tasks = self.hosts_tasks(session);
        let features = self.config.client;
        match (role, method) {
            (Role::Server, "tools/list") => self.on_tools_list(session, id, params),
            (Role::Server, "tools/call") => self.on_tools_call(session, id, params),
            (Role::Server, "logging/setLevel") if self.config.logging => {
                self.on_set_level(session, id, params)
            }
            (_, "tasks/get") if hosts_tasks => self.on_tasks_get(session, id, params),
            (_, "tasks/result") if hosts_tasks => self.on_tasks_result(session, id, params),
            (_, "tasks/list") if hosts_tasks && self.config.tasks.list => {
                self.on_tasks_list(session, id, params)
            }
            (_, "tasks/cancel") if hosts_tasks && self.config.tasks.cancel => {
                self.on_tasks_cancel(session, id, params)
            }
            (Role::Client, "sampling/createMessage") if features.sampling => {
                self.on_peer_request(session, id, method, params, true)
            }
            (Role::Client, "elicitation/create") if features.elicitation => {
                self.on_peer_request(session, id, method, params, true)
            }
            (Role::Client, "roots/list") if features.roots => {
                self.on_peer_request(session, id, method, params, false)
            }
            _ if !owned_by_engine(method) && self.config.app_serves(method) => {
                let era = crate::task::Era::V2025_11_25;
                self.app_request(session, id, method, params, era, None);
                Ok(())
            }
            _ => Err(Reject::peer(
                PeerErrorKind::UnknownMethod(method.to_owned()),
                RpcError::method_not_found(method),
            )),
        }
    }

    /// A notification on a session of this era.
    pub(crate) fn legacy_notification(
        &mut self,
        session: SessionId,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let handled = match method {
            "notifications/initialized" => Ok(()),
            "notifications/cancelled" => {
                jsonrpc::params(params).map(|p| self.on_cancelled(session, p))
            }
            "notifications/tasks/status" => jsonrpc::params(params).map(|task: Task| {
                self.observe_remote_task(session, task, polling::Source::Notification)
            }),
            "notifications/progress" => jsonrpc::params(params)
                .map(|p: ProgressParams| self.event(crate::Event::Progress { session, params: p })),
            _ => {
                self.event(crate::Event::Notification {
                    session,
                    method: method.to_owned(),
                    params: params.map(ToOwned::to_owned),
                });
                Ok(())
            }
        };
        if let Err(reject) = handled {
            self.peer_error(
                session,
                PeerErrorKind::Malformed,
                format!("{method}: {}", reject.error.message),
            );
        }
    }

    /// Tasks are live on this session: its version has them and we declared hosting them
    /// (a client only hosts sampling and elicitation tasks).
    pub(crate) fn hosts_tasks(&self, session: SessionId) -> bool {
        let Some(s) = self.session(session) else {
            return false;
        };
        let declared = s.role == Role::Server || self.config.client.hosts_tasks();
        self.config.tasks.enabled && declared && s.version().is_some_and(version_has_tasks)
    }
}

/// Methods the engine answers itself, whatever the application lists.
fn owned_by_engine(method: &str) -> bool {
    matches!(method, "initialize" | "ping")
        || method.starts_with("tools/")
        || method.starts_with("tasks/")
}
