//! JSON-RPC 2.0 envelopes: request ids, error objects, parsing peer bytes, writing replies.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

/// Standard JSON-RPC error codes used by MCP.
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available in this session.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters (also: unknown, expired or terminal tasks).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Implementation-defined: the connection closed before the request was answered.
    pub const CONNECTION_CLOSED: i64 = -32000;
    /// Implementation-defined: the request timed out locally.
    pub const REQUEST_TIMEOUT: i64 = -32001;
}

/// A JSON-RPC request id: a string or an integer, never null.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// The error code (see [`code`]).
    pub code: i64,
    /// A short description.
    #[serde(default)]
    pub message: String,
    /// Optional details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with a code and a message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data` attached.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    pub(crate) fn invalid_params(message: impl Into<String>) -> Self {
        RpcError::new(code::INVALID_PARAMS, message)
    }

    pub(crate) fn invalid_request(message: impl Into<String>) -> Self {
        RpcError::new(code::INVALID_REQUEST, message)
    }

    pub(crate) fn method_not_found(method: &str) -> Self {
        RpcError::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// One parsed inbound message, borrowing from the input line.
#[derive(Debug)]
pub(crate) enum Inbound<'a> {
    Request {
        id: RequestId,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    Response {
        id: RequestId,
        outcome: Result<&'a RawValue, RpcError>,
    },
}

/// Why a line is not a message we can act on.
#[derive(Debug)]
pub(crate) enum Malformed {
    /// Answer with this error (id omitted when it could not be read).
    Reply(Option<RequestId>, RpcError),
    /// A malformed response or error report: nothing to answer, only to report.
    Ignore(String),
}

/// A JSON member that distinguishes "absent" from "null".
#[derive(Debug, Default)]
pub(crate) enum Member<T> {
    #[default]
    Absent,
    Null,
    Present(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Member<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(d)?.map_or(Member::Null, Member::Present))
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    id: Member<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<&'a RawValue>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

/// Parses one line of peer bytes. Never panics; every failure says how to answer.
pub(crate) fn parse(line: &[u8]) -> Result<Inbound<'_>, Malformed> {
    let parse_error = |why: String| Malformed::Reply(None, RpcError::new(code::PARSE_ERROR, why));
    let text = std::str::from_utf8(line)
        .map_err(|e| parse_error(format!("Parse error: invalid UTF-8 ({e})")))?;
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return Err(match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => Malformed::Reply(
                None,
                RpcError::invalid_request("Invalid Request: JSON-RPC batches are not supported"),
            ),
            Err(e) => parse_error(format!("Parse error: {e}")),
        });
    }
    let env: Envelope<'_> = serde_json::from_str(text).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => Malformed::Reply(
            None,
            RpcError::invalid_request(format!("Invalid Request: {e}")),
        ),
        _ => parse_error(format!("Parse error: {e}")),
    })?;
    let id = match env.id {
        Member::Absent => None,
        Member::Null => Some(Err("id must not be null")),
        Member::Present(raw) => Some(parse_id(raw).ok_or("id must be a string or an integer")),
    };
    let is_response = env.method.is_none() && (env.result.is_some() || env.error.is_some());
    if is_response {
        let Some(Ok(id)) = id else {
            return Err(Malformed::Ignore(format!(
                "response without a usable id: {}",
                truncate(text, 200)
            )));
        };
        if env.jsonrpc.as_deref() != Some("2.0") {
            return Err(Malformed::Ignore(format!(
                "response {id} lacks \"jsonrpc\":\"2.0\""
            )));
        }
        let outcome = match (env.result, env.error) {
            (Some(result), None) => Ok(result),
            (None, Some(error)) => Err(serde_json::from_str::<RpcError>(error.get())
                .unwrap_or_else(|e| {
                    RpcError::new(code::INTERNAL_ERROR, format!("malformed error object: {e}"))
                })),
            _ => {
                return Err(Malformed::Ignore(format!(
                    "response {id} has both result and error"
                )))
            }
        };
        return Ok(Inbound::Response { id, outcome });
    }
    let id = match id {
        None => None,
        Some(Ok(id)) => Some(id),
        Some(Err(why)) => {
            return Err(Malformed::Reply(
                None,
                RpcError::invalid_request(format!("Invalid Request: {why}")),
            ))
        }
    };
    let reject = |why: &str| {
        Malformed::Reply(
            id.clone(),
            RpcError::invalid_request(format!("Invalid Request: {why}")),
        )
    };
    if env.jsonrpc.as_deref() != Some("2.0") {
        return Err(reject("\"jsonrpc\" must be \"2.0\""));
    }
    let Some(method) = env.method else {
        return Err(reject("missing \"method\""));
    };
    let method: Cow<'_, str> =
        serde_json::from_str(method.get()).map_err(|_| reject("\"method\" must be a string"))?;
    if env.result.is_some() || env.error.is_some() {
        return Err(reject("a request cannot carry \"result\" or \"error\""));
    }
    let params = env.params.filter(|p| p.get() != "null");
    Ok(match id {
        Some(id) => Inbound::Request { id, method, params },
        None => Inbound::Notification { method, params },
    })
}

fn parse_id(raw: &RawValue) -> Option<RequestId> {
    let text = raw.get();
    if text.starts_with('"') {
        serde_json::from_str(text).ok().map(RequestId::String)
    } else {
        text.parse().ok().map(RequestId::Number)
    }
}

fn truncate(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Deserializes `params` into `T`, naming the offending field in a -32602 error.
pub(crate) fn params<'a, T: Deserialize<'a>>(params: Option<&'a RawValue>) -> Result<T, RpcError> {
    let text = params.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or(&msg);
        RpcError::invalid_params(format!("Invalid params: {msg}"))
    })
}

/// Deserializes any JSON number as milliseconds; negatives and fractions are clamped.
pub(crate) fn lenient_ms<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64))),
        Some(other) => Err(D::Error::custom(format!(
            "expected milliseconds, found {other}"
        ))),
    }
}

#[derive(Serialize)]
struct ResultMessage<'a, T: Serialize + ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a T,
}

#[derive(Serialize)]
struct ErrorMessage<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    error: &'a RpcError,
}

#[derive(Serialize)]
struct RequestMessage<'a, P: Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<P>,
}

#[derive(Serialize)]
struct NotificationMessage<'a, P: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<P>,
}

fn to_line(message: &impl Serialize) -> String {
    // Serializing our own types to a String cannot fail: no maps with non-string keys.
    serde_json::to_string(message).expect("wire types serialize")
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` as one compact line.
pub(crate) fn result_line<T: Serialize + ?Sized>(id: &RequestId, result: &T) -> String {
    to_line(&ResultMessage {
        jsonrpc: "2.0",
        id,
        result,
    })
}

/// `{"jsonrpc":"2.0","id":…,"error":…}`; the id is omitted when unknown.
pub(crate) fn error_line(id: Option<&RequestId>, error: &RpcError) -> String {
    to_line(&ErrorMessage {
        jsonrpc: "2.0",
        id,
        error,
    })
}

/// A request line.
pub(crate) fn request_line<P: Serialize>(
    id: &RequestId,
    method: &str,
    params: Option<P>,
) -> String {
    to_line(&RequestMessage {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
}

/// A notification line.
pub(crate) fn notification_line<P: Serialize>(method: &str, params: Option<P>) -> String {
    to_line(&NotificationMessage {
        jsonrpc: "2.0",
        method,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply_code(line: &str) -> (Option<RequestId>, i64) {
        match parse(line.as_bytes()) {
            Err(Malformed::Reply(id, e)) => (id, e.code),
            other => panic!("{line}: expected an error reply, got {other:?}"),
        }
    }

    #[test]
    fn classifies_requests_notifications_and_responses() {
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#),
            Ok(Inbound::Request { id: RequestId::String(s), .. }) if s == "a"
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":null}"#),
            Ok(Inbound::Notification { params: None, .. })
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
            Ok(Inbound::Response {
                id: RequestId::Number(7),
                outcome: Ok(_)
            })
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}"#),
            Ok(Inbound::Response {
                outcome: Err(RpcError { code: -32602, .. }),
                ..
            })
        ));
    }

    #[test]
    fn malformed_input_gets_precise_codes() {
        assert_eq!(reply_code("{"), (None, code::PARSE_ERROR));
        assert_eq!(reply_code("[1,2]"), (None, code::INVALID_REQUEST));
        assert_eq!(reply_code("[1,"), (None, code::PARSE_ERROR));
        assert_eq!(reply_code("42"), (None, code::INVALID_REQUEST));
        assert_eq!(
            reply_code(r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#),
            (Some(RequestId::Number(3)), code::INVALID_REQUEST)
        );
        assert_eq!(
            reply_code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            (None, code::INVALID_REQUEST)
        );
        assert_eq!(
            reply_code(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
            (None, code::INVALID_REQUEST)
        );
        assert_eq!(
            reply_code(r#"{"jsonrpc":"2.0","id":1,"method":7}"#),
            (Some(RequestId::Number(1)), code::INVALID_REQUEST)
        );
        assert_eq!(
            reply_code(r#"{"jsonrpc":"2.0","id":1}"#),
            (Some(RequestId::Number(1)), code::INVALID_REQUEST)
        );
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}"#),
            Err(Malformed::Ignore(_))
        ));
        assert_eq!(reply_code("\u{feff}"), (None, code::PARSE_ERROR));
        let deep = "[".repeat(100_000);
        assert_eq!(reply_code(&deep), (None, code::PARSE_ERROR));
        let deep_obj = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{}}}"#,
            "{\"a\":".repeat(100_000)
        );
        assert_eq!(reply_code(&deep_obj).1, code::PARSE_ERROR);
    }

    #[test]
    fn invalid_utf8_is_a_parse_error() {
        assert!(matches!(
            parse(b"{\"a\":\"\xff\"}"),
            Err(Malformed::Reply(
                None,
                RpcError {
                    code: code::PARSE_ERROR,
                    ..
                }
            ))
        ));
    }

    #[test]
    fn params_errors_name_the_field() {
        #[derive(Deserialize, Debug)]
        #[serde(rename_all = "camelCase")]
        #[allow(dead_code)]
        struct P {
            task_id: String,
        }
        let err = params::<P>(None).unwrap_err();
        assert_eq!(err.code, code::INVALID_PARAMS);
        assert!(err.message.contains("taskId"), "{}", err.message);
    }
}
