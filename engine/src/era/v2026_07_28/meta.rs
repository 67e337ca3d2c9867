//! The per-request `params._meta` of this era: protocol version and client capabilities
//! travel with every request, since there is no handshake.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::{EXTENSION, VERSION};
use crate::jsonrpc::{Reject, RpcError};
use crate::log_level::LogLevel;
use crate::model::InputKinds;
use crate::peer_error::PeerErrorKind;

/// The `_meta` key that marks a request of this era.
pub(crate) const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
pub(super) const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
pub(super) const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of the least severe log message the request wants (none: no logs).
pub(super) const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// The `_meta` key of our identity in every result.
pub(super) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// `-32021`: the request needs a client capability it did not declare.
pub(super) const MISSING_CAPABILITY: i64 = -32021;
/// `-32022`: the request names a protocol version we do not serve statelessly.
pub(super) const UNSUPPORTED_VERSION: i64 = -32022;

#[derive(Deserialize)]
struct Params {
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    version: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    capabilities: Option<Value>,
    #[serde(rename = "progressToken", default)]
    progress_token: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", default)]
    log_level: Option<Value>,
}

/// What one request declares about itself.
#[derive(Debug)]
pub(super) struct RequestMeta {
    /// The client capabilities of this request (`{}` when none).
    pub capabilities: Value,
    /// The request's progress token.
    pub progress_token: Option<Value>,
    /// The least severe log message the request wants; none wants no log messages.
    pub log_level: Option<LogLevel>,
}

impl RequestMeta {
    /// Reads a request's `_meta` once, if the request is of this era: `None` when it carries
    /// no protocol version (a 2025-11-25 request; `server/discover` always is of this era),
    /// else the checked `_meta` or the error the request gets (a missing required key is
    /// -32602, another version than ours -32022).
    pub fn of_request(
        method: &str,
        params: Option<&RawValue>,
    ) -> Option<Result<RequestMeta, Reject>> {
        let discover = method == "server/discover";
        if !discover && !names_version(params) {
            return None;
        }
        let parsed = serde_json::from_str::<Params>(params.map_or("{}", RawValue::get));
        match parsed {
            Ok(Params {
                meta: Some(Meta {
                    version: Some(_), ..
                }),
            }) => {}
            _ if !discover => return None,
            _ => {}
        }
        Some(Self::check(parsed))
    }

    fn check(parsed: Result<Params, serde_json::Error>) -> Result<RequestMeta, Reject> {
        let parsed = parsed.map_err(|e| {
            let message = e.to_string();
            let message = message.split(" at line ").next().unwrap_or(&message);
            invalid_meta(None, format!("Invalid params: {message}"))
        })?;
        let Some(meta) = parsed.meta else {
            return Err(invalid_meta(
                Some("_meta"),
                format!("Invalid params: missing params._meta[\"{VERSION_KEY}\"]"),
            ));
        };
        let version = match meta.version {
            Some(Value::String(v)) => v,
            Some(_) => {
                return Err(invalid_meta(
                    Some(VERSION_KEY),
                    format!("Invalid params: _meta[\"{VERSION_KEY}\"] must be a string"),
                ))
            }
            None => {
                return Err(invalid_meta(
                    Some(VERSION_KEY),
                    format!("Invalid params: missing params._meta[\"{VERSION_KEY}\"]"),
                ))
            }
        };
        let capabilities = match meta.capabilities {
            Some(caps @ Value::Object(_)) => caps,
            Some(_) => {
                return Err(invalid_meta(
                    Some(CAPABILITIES_KEY),
                    format!("Invalid params: _meta[\"{CAPABILITIES_KEY}\"] must be an object"),
                ))
            }
            None => {
                return Err(invalid_meta(
                    Some(CAPABILITIES_KEY),
                    format!("Invalid params: missing params._meta[\"{CAPABILITIES_KEY}\"]"),
                ))
            }
        };
        if version != VERSION {
            let error = RpcError::new(UNSUPPORTED_VERSION, "Unsupported protocol version")
                .with_data(json!({ "supported": [VERSION], "requested": &version }));
            return Err(Reject::peer(
                PeerErrorKind::UnsupportedVersion(version),
                error,
            ));
        }
        let log_level = match meta.log_level {
            None | Some(Value::Null) => None,
            Some(level) => Some(LogLevel::deserialize(&level).map_err(|_| {
                invalid_meta(
                    Some(LOG_LEVEL_KEY),
                    format!(
                        "Invalid params: _meta[\"{LOG_LEVEL_KEY}\"] must be one of debug, info, \
                         notice, warning, error, critical, alert, emergency; got {level}"
                    ),
                )
            })?),
        };
        Ok(RequestMeta {
            capabilities,
            progress_token: meta.progress_token,
            log_level,
        })
    }

    /// Whether this request declares the tasks extension (any object under its key).
    pub fn declares_tasks(&self) -> bool {
        self.capabilities
            .get("extensions")
            .and_then(|e| e.get(EXTENSION))
            .is_some_and(Value::is_object)
    }

    /// The kinds of input this request's client can answer.
    pub fn input_kinds(&self) -> InputKinds {
        let has = |key: &str| self.capabilities.get(key).is_some_and(Value::is_object);
        InputKinds {
            elicitation: has("elicitation"),
            sampling: has("sampling"),
            roots: has("roots"),
        }
    }
}

/// Whether the params may carry the version key, cheaply: a legacy request almost never
/// names it at all. A byte search for its `/`, then its tail, short enough for the standard
/// library's vectorised search (the whole key cost a tools/call ~1,600 instructions);
/// `initialize`'s `"protocolVersion"` has no slash before it.
fn names_version(params: Option<&RawValue>) -> bool {
    params.is_some_and(|p| {
        let text = p.get();
        text.as_bytes().contains(&b'/') && text.contains("/protocolVersion\"")
    })
}

/// `-32021` naming the tasks extension as the capability the request lacks.
pub(super) fn tasks_required() -> Reject {
    let error = RpcError::new(MISSING_CAPABILITY, "Missing required client capability")
        .with_data(json!({ "requiredCapabilities": { "extensions": { EXTENSION: {} } } }));
    Reject::peer(PeerErrorKind::MissingCapability, error)
}

fn invalid_meta(field: Option<&str>, message: String) -> Reject {
    Reject::peer(
        PeerErrorKind::InvalidParams {
            field: field.map(str::to_owned),
        },
        RpcError::invalid_params(message),
    )
}
