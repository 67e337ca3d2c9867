//! The few fields of an incoming message the transport reads itself: its id and method (to
//! wait for the reply and to choose the era) and what the 2026-07-28 routing headers must
//! match. The engine reads the message again, whole; a body this cannot read, or a JSON
//! object that is no JSON-RPC message (no method, no result, no error), goes to the engine
//! as it is, which answers it with the precise JSON-RPC error.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use taskwire_driver::engine::jsonrpc::RequestId;

/// The 2026-07-28 per-request `_meta` key naming the protocol version.
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

#[derive(Deserialize)]
struct Raw<'a> {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

#[derive(Default, Deserialize)]
struct Params {
    #[serde(default)]
    name: Option<Value>,
    #[serde(default)]
    uri: Option<Value>,
    #[serde(default, rename = "taskId")]
    task_id: Option<Value>,
    #[serde(default, rename = "_meta")]
    meta: Option<Meta>,
}

#[derive(Default, Deserialize)]
struct Meta {
    #[serde(default, rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<Value>,
}

/// What the transport knows of one incoming message.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Envelope {
    /// The request id (`None` for a notification or a response).
    pub id: Option<RequestId>,
    /// The method (`None` for a response).
    pub method: Option<String>,
    /// What `Mcp-Name` must say: `params.name` (tools/call, prompts/get), `params.uri`
    /// (resources/read), `params.taskId` (tasks/get, tasks/update, tasks/cancel).
    pub name: Option<String>,
    /// `params._meta["io.modelcontextprotocol/protocolVersion"]`.
    pub protocol_version: Option<String>,
}

impl Envelope {
    /// The envelope of `body`; `None` when it is no single JSON-RPC message this can read.
    pub fn read(body: &[u8]) -> Option<Envelope> {
        let raw: Raw<'_> = serde_json::from_slice(body).ok()?;
        if raw.method.is_none() && raw.result.is_none() && raw.error.is_none() {
            // Neither a request, a notification nor a response: the engine's -32600.
            return None;
        }
        // Params that are not an object are the engine's to refuse.
        let params: Params = raw
            .params
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or_default();
        let text = |v: Option<Value>| v.and_then(|v| v.as_str().map(str::to_owned));
        let name = match raw.method.as_deref() {
            Some("tools/call" | "prompts/get") => text(params.name),
            Some("resources/read") => text(params.uri),
            Some("tasks/get" | "tasks/update" | "tasks/cancel") => text(params.task_id),
            _ => None,
        };
        Some(Envelope {
            id: raw.id,
            method: raw.method,
            name,
            protocol_version: text(params.meta.and_then(|m| m.protocol_version)),
        })
    }

    /// A request: it has an id and a method, and its reply ends its response.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.method.as_ref().and(self.id.as_ref())
    }

    /// Whether it is a request of the per-request era (2026-07-28 on): its `_meta` names its
    /// protocol version.
    pub fn is_per_request(&self) -> bool {
        self.protocol_version.is_some()
    }

    /// Whether `Mcp-Name` names a task (`tasks/get`, `tasks/update`, `tasks/cancel`).
    pub fn names_a_task(&self) -> bool {
        matches!(
            self.method.as_deref(),
            Some("tasks/get" | "tasks/update" | "tasks/cancel")
        )
    }

    /// Whether `Mcp-Name` is required for this method.
    pub fn names_something(&self) -> bool {
        matches!(
            self.method.as_deref(),
            Some(
                "tools/call"
                    | "prompts/get"
                    | "resources/read"
                    | "tasks/get"
                    | "tasks/update"
                    | "tasks/cancel"
            )
        )
    }
}

/// `params.arguments` of a `tools/call` body (`null` when it has none).
pub(crate) fn arguments(body: &[u8]) -> Value {
    #[derive(Deserialize)]
    struct Call {
        #[serde(default)]
        params: Option<Arguments>,
    }
    #[derive(Deserialize)]
    struct Arguments {
        #[serde(default)]
        arguments: Value,
    }
    serde_json::from_slice::<Call>(body)
        .ok()
        .and_then(|call| call.params)
        .map_or(Value::Null, |params| params.arguments)
}

/// The `_meta` key [`Envelope::protocol_version`] comes from, for error messages.
pub(crate) fn version_key() -> &'static str {
    VERSION_KEY
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_routing_needs_and_nothing_more() {
        let e = Envelope::read(
            br#"{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t1",
                "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        )
        .expect("an envelope");
        assert_eq!(e.request_id(), Some(&RequestId::Number(3)));
        assert_eq!(e.name.as_deref(), Some("t1"));
        assert_eq!(e.protocol_version.as_deref(), Some("2026-07-28"));
        let note = Envelope::read(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .expect("an envelope");
        assert_eq!(note.request_id(), None);
        // Params that are not an object still give the id, for the engine's error.
        let odd = Envelope::read(br#"{"jsonrpc":"2.0","id":"a","method":"x","params":[1]}"#)
            .expect("an envelope");
        assert_eq!(odd.request_id(), Some(&RequestId::String("a".into())));
        assert!(Envelope::read(b"[1,2]").is_none());
        // A JSON object that is no JSON-RPC message; responses still are.
        assert!(Envelope::read(br#"{"foo":1}"#).is_none());
        assert!(Envelope::read(br#"{"jsonrpc":"2.0","id":4}"#).is_none());
        let response = Envelope::read(br#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
        assert_eq!(response.expect("a response").request_id(), None);
        assert!(Envelope::read(b"not json").is_none());
    }
}
