//! The handshake: `initialize` and version negotiation, for either role.

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::types::{
    version_has_tasks, InitializeParams, InitializeResult, LATEST_VERSION, SUPPORTED_VERSIONS,
};
use crate::event::Event;
use crate::host::Host;
use crate::ids::SessionId;
use crate::jsonrpc::{self, code, Reject, RequestId, RpcError};
use crate::session::{Phase, Purpose, Role};
use crate::{ClientEra, Millis, UsageError};

impl Host {
    /// Server: answers the client's `initialize`.
    pub(super) fn on_initialize(
        &mut self,
        session: SessionId,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), Reject> {
        if self.session(session).is_some_and(|s| s.phase != Phase::New) {
            return Err(RpcError::invalid_request("Invalid Request: already initialized").into());
        }
        let p: InitializeParams = jsonrpc::params(params)?;
        let version = SUPPORTED_VERSIONS
            .into_iter()
            .find(|v| *v == p.protocol_version)
            .unwrap_or(LATEST_VERSION);
        let result = InitializeResult {
            protocol_version: version.to_owned(),
            capabilities: self.server_capabilities(version),
            server_info: self.config.info.clone(),
            instructions: self.config.instructions.clone(),
        };
        if let Some(s) = self.session_mut(session) {
            s.phase = Phase::Ready {
                version: version.to_owned(),
            };
            s.peer_capabilities = p.capabilities.clone();
        }
        self.reply(session, id, None, jsonrpc::result_line(id, &result));
        self.event(Event::Initialized {
            session,
            protocol_version: version.to_owned(),
            peer: p.client_info,
            capabilities: p.capabilities,
        });
        Ok(())
    }

    fn server_capabilities(&self, version: &str) -> Value {
        let mut caps = Map::new();
        caps.insert("tools".into(), json!({ "listChanged": false }));
        if self.config.tasks.enabled && version_has_tasks(version) {
            caps.insert(
                "tasks".into(),
                self.tasks_capability(json!({ "tools": { "call": {} } })),
            );
        }
        if self.config.logging {
            caps.insert("logging".into(), json!({}));
        }
        self.with_app_capabilities(caps)
    }

    fn client_capabilities(&self) -> Value {
        let features = self.config.client;
        let mut caps = Map::new();
        let mut task_requests = Map::new();
        if features.sampling {
            caps.insert("sampling".into(), json!({}));
            task_requests.insert("sampling".into(), json!({ "createMessage": {} }));
        }
        if features.elicitation {
            caps.insert("elicitation".into(), json!({ "form": {} }));
            task_requests.insert("elicitation".into(), json!({ "create": {} }));
        }
        if features.roots {
            caps.insert("roots".into(), json!({ "listChanged": false }));
        }
        if self.config.tasks.enabled && !task_requests.is_empty() {
            caps.insert(
                "tasks".into(),
                self.tasks_capability(Value::Object(task_requests)),
            );
        }
        self.with_app_capabilities(caps)
    }

    /// The engine's capabilities plus the application's; the engine's keys win.
    fn with_app_capabilities(&self, mut caps: Map<String, Value>) -> Value {
        for (key, value) in &self.config.app_capabilities {
            caps.entry(key.clone()).or_insert_with(|| value.clone());
        }
        Value::Object(caps)
    }

    /// `tasks: {list?, cancel?, requests}` as configured.
    fn tasks_capability(&self, requests: Value) -> Value {
        let mut tasks = json!({ "requests": requests });
        if self.config.tasks.list {
            tasks["list"] = json!({});
        }
        if self.config.tasks.cancel {
            tasks["cancel"] = json!({});
        }
        tasks
    }

    /// Client: opens a client session in the era [`Config::client_era`](crate::Config)
    /// chooses: `initialize` (2025-11-25), or `server/discover` (2026-07-28), which under
    /// [`ClientEra::Auto`] falls back to `initialize` for a server that does not speak it.
    /// [`Event::Initialized`] (whose `protocol_version` names the era) or
    /// [`Event::InitializeFailed`] follows.
    pub fn initialize(&mut self, now: Millis, session: SessionId) -> Result<RequestId, UsageError> {
        let s = self
            .session(session)
            .ok_or(UsageError::UnknownSession(session))?;
        if s.role != Role::Client {
            return Err(UsageError::WrongRole {
                needs: Role::Client,
            });
        }
        if s.phase != Phase::New {
            return Err(UsageError::AlreadyInitialized(session));
        }
        self.advance(now);
        match self.config.client_era {
            ClientEra::Legacy => self.send_initialize(session),
            era => self.discover(session, era == ClientEra::Auto),
        }
        .ok_or(UsageError::UnknownSession(session))
    }

    /// Client: sends `initialize`.
    pub(crate) fn send_initialize(&mut self, session: SessionId) -> Option<RequestId> {
        let params = InitializeParams {
            protocol_version: LATEST_VERSION.to_owned(),
            capabilities: self.client_capabilities(),
            client_info: self.config.info.clone(),
        };
        self.session_mut(session)?.phase = Phase::Initializing;
        self.send_request(
            session,
            "initialize",
            Some(params),
            Purpose::Initialize,
            None,
        )
    }

    /// Client: the server answered `initialize`.
    pub(super) fn on_initialize_response(
        &mut self,
        session: SessionId,
        outcome: Result<Value, RpcError>,
    ) {
        let accepted = outcome.and_then(|v| {
            let result: InitializeResult = serde_json::from_value(v).map_err(|e| {
                RpcError::new(code::INVALID_PARAMS, format!("Malformed initialize result: {e}"))
            })?;
            if SUPPORTED_VERSIONS.contains(&result.protocol_version.as_str()) {
                Ok(result)
            } else {
                Err(RpcError::new(
                    code::INVALID_PARAMS,
                    format!(
                        "Server chose protocol version {:?}, which we do not speak",
                        result.protocol_version
                    ),
                )
                .with_data(json!({ "supported": SUPPORTED_VERSIONS, "requested": result.protocol_version })))
            }
        });
        match accepted {
            Ok(result) => {
                if let Some(s) = self.session_mut(session) {
                    s.phase = Phase::Ready {
                        version: result.protocol_version.clone(),
                    };
                    s.peer_capabilities = result.capabilities.clone();
                }
                let line = jsonrpc::notification_line::<()>("notifications/initialized", None);
                let kind = crate::event::MessageKind::Notification {
                    method: "notifications/initialized",
                    task: None,
                };
                self.send(session, kind, None, line);
                self.event(Event::Initialized {
                    session,
                    protocol_version: result.protocol_version,
                    peer: result.server_info,
                    capabilities: result.capabilities,
                });
            }
            Err(error) => {
                self.event(Event::InitializeFailed { session, error });
                self.close(self.now, session);
            }
        }
    }
}
