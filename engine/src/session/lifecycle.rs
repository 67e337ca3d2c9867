//! The handshake: `initialize` and version negotiation, for either role.

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::outbound::Purpose;
use super::{Phase, Role, Session};
use crate::event::Event;
use crate::jsonrpc::{self, code, RequestId, RpcError};
use crate::wire::v2025_11_25::{
    version_has_tasks, InitializeParams, InitializeResult, LATEST_VERSION, SUPPORTED_VERSIONS,
};
use crate::UsageError;

impl Session {
    /// Server: answers the client's `initialize`.
    pub(super) fn on_initialize(
        &mut self,
        id: &RequestId,
        params: Option<&RawValue>,
    ) -> Result<(), RpcError> {
        if self.phase != Phase::New {
            return Err(RpcError::invalid_request(
                "Invalid Request: already initialized",
            ));
        }
        let p: InitializeParams = jsonrpc::params(params)?;
        let version = SUPPORTED_VERSIONS
            .into_iter()
            .find(|v| *v == p.protocol_version)
            .unwrap_or(LATEST_VERSION);
        self.phase = Phase::Ready {
            version: version.to_owned(),
        };
        self.peer_capabilities = p.capabilities.clone();
        let result = InitializeResult {
            protocol_version: version.to_owned(),
            capabilities: self.server_capabilities(version),
            server_info: self.config.info.clone(),
            instructions: self.config.instructions.clone(),
        };
        self.reply(id, &result);
        self.event(Event::Initialized {
            protocol_version: version.to_owned(),
            peer: p.client_info,
            capabilities: p.capabilities,
        });
        Ok(())
    }

    fn server_capabilities(&self, version: &str) -> Value {
        let mut caps = json!({ "tools": { "listChanged": false } });
        if self.config.tasks.enabled && version_has_tasks(version) {
            caps["tasks"] = self.tasks_capability(json!({ "tools": { "call": {} } }));
        }
        caps
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

    /// Client: sends `initialize`; [`Event::Initialized`] or [`Event::InitializeFailed`] follows.
    pub fn initialize(&mut self, now: crate::Millis) -> Result<RequestId, UsageError> {
        if self.role != Role::Client {
            return Err(UsageError::Invalid("only a client sends initialize".into()));
        }
        self.check_open()?;
        if self.phase != Phase::New {
            return Err(UsageError::Invalid("initialize was already sent".into()));
        }
        self.advance(now);
        self.phase = Phase::Initializing;
        let params = InitializeParams {
            protocol_version: LATEST_VERSION.to_owned(),
            capabilities: self.client_capabilities(),
            client_info: self.config.info.clone(),
        };
        Ok(self.send_request("initialize", Some(params), Purpose::Initialize))
    }

    /// Client: the server answered `initialize`.
    pub(super) fn on_initialize_response(&mut self, outcome: Result<Value, RpcError>) {
        let accepted = outcome.and_then(|v| {
            let result: InitializeResult = serde_json::from_value(v)
                .map_err(|e| RpcError::new(code::INVALID_PARAMS, format!("Malformed initialize result: {e}")))?;
            if SUPPORTED_VERSIONS.contains(&result.protocol_version.as_str()) {
                Ok(result)
            } else {
                Err(RpcError::new(
                    code::INVALID_PARAMS,
                    format!("Server chose protocol version {:?}, which we do not speak", result.protocol_version),
                )
                .with_data(json!({ "supported": SUPPORTED_VERSIONS, "requested": result.protocol_version })))
            }
        });
        match accepted {
            Ok(result) => {
                self.phase = Phase::Ready {
                    version: result.protocol_version.clone(),
                };
                self.peer_capabilities = result.capabilities.clone();
                self.send(jsonrpc::notification_line::<()>(
                    "notifications/initialized",
                    None,
                ));
                self.event(Event::Initialized {
                    protocol_version: result.protocol_version,
                    peer: result.server_info,
                    capabilities: result.capabilities,
                });
            }
            Err(error) => {
                self.event(Event::InitializeFailed { error });
                self.close(self.now);
            }
        }
    }
}
