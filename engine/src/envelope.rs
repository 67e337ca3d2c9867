//! What an incoming message says about itself, read by the engine's rules for a caller that
//! must decide before the engine serves it: a transport choosing the era of a body whose
//! headers do not say it, a driver fetching the task a request names from a shared store.
//! The engine reads the message whole again when it serves it; a caller that only checks
//! what a request says hands the engine a [`Check`](crate::Check) instead, and the message
//! is read once.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::era::v2026_07_28::VERSION_KEY;
use crate::jsonrpc::RequestId;
use crate::lenient::Lenient;
use crate::routed::TASK_METHODS;
use crate::time::Millis;

#[derive(Deserialize)]
struct Raw<'a> {
    /// As sent, `null` too (a request's null id must not read as a notification's none).
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    params: Lenient<Params<'a>>,
    #[serde(default)]
    result: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

/// A member that is present, whatever its value.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// The params fields an envelope reads.
#[derive(Default, Deserialize)]
struct Params<'a> {
    #[serde(default, borrow)]
    name: Lenient<Cow<'a, str>>,
    #[serde(default, borrow)]
    uri: Lenient<Cow<'a, str>>,
    #[serde(default, borrow, rename = "taskId")]
    task_id: Lenient<Cow<'a, str>>,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
    #[serde(default, borrow)]
    cursor: Lenient<Cow<'a, str>>,
    #[serde(default, borrow, rename = "_meta")]
    meta: Lenient<Meta<'a>>,
}

#[derive(Default, Deserialize)]
struct Meta<'a> {
    #[serde(default, borrow, rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Lenient<Cow<'a, str>>,
}

/// What an incoming message says about itself: its id and method, what it names, and the
/// protocol version a 2026-07-28 request names in its `_meta`. Read leniently: a field of
/// the wrong type is left out (the engine's answer, when it serves the message, says what
/// is wrong with it).
///
/// ```
/// use taskwire_engine::{Envelope, RequestId};
///
/// let message = br#"{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t1",
///     "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
/// let envelope = Envelope::read(message).expect("a JSON-RPC message");
/// assert_eq!(envelope.request_id(), Some(&RequestId::Number(3)));
/// assert_eq!(envelope.task(), Some("t1"));
/// assert_eq!(envelope.protocol_version.as_deref(), Some("2026-07-28"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Envelope {
    /// The request id (`None` for a notification; a response's is its request's).
    pub id: Option<RequestId>,
    /// The method (`None` for a response).
    pub method: Option<String>,
    /// What the request names, which the 2026-07-28 `Mcp-Name` header repeats:
    /// `params.name` (`tools/call`, `prompts/get`), `params.uri` (`resources/read`),
    /// `params.taskId` (`tasks/get`, `tasks/update`, `tasks/cancel`, `tasks/result`).
    pub name: Option<String>,
    /// `params._meta["io.modelcontextprotocol/protocolVersion"]`: set exactly on a message of
    /// the per-request era (2026-07-28).
    pub protocol_version: Option<String>,
    /// `params.arguments` of a `tools/call`, as sent.
    pub arguments: Option<Box<RawValue>>,
    /// `params.cursor` of a `tasks/list` (see [`Envelope::list_after`]).
    pub cursor: Option<String>,
}

impl Envelope {
    /// The envelope of `message`; `None` when it is no single JSON-RPC message (not UTF-8,
    /// not JSON, not an object, an object with no method, result or error, or an id that is neither a
    /// string nor an integer where one is needed): the engine answers such a message with
    /// the precise error when it is fed.
    pub fn read(message: &[u8]) -> Option<Envelope> {
        // Text that is no UTF-8, even where the envelope reads nothing, is the engine's -32700.
        let text = std::str::from_utf8(message).ok()?;
        // An object only (serde would also read a struct from an array, field by field).
        if !text
            .trim_start_matches([' ', '\t', '\n', '\r'])
            .starts_with('{')
        {
            return None;
        }
        let raw: Raw<'_> = serde_json::from_str(text).ok()?;
        if raw.method.is_none() && raw.result.is_none() && raw.error.is_none() {
            return None;
        }
        // A request's id must be a string or an integer (null is the engine's -32600).
        let id = match raw.id.map(|id| (id.get(), id)) {
            None => None,
            Some(("null", _)) if raw.method.is_none() => None,
            Some((_, id)) => Some(RequestId::deserialize(id).ok()?),
        };
        // Params that are no object are the engine's to refuse.
        let params = raw.params.0.unwrap_or_default();
        let method = raw.method.map(Cow::into_owned);
        let named = match method.as_deref() {
            Some("tools/call" | "prompts/get") => params.name,
            Some("resources/read") => params.uri,
            Some(m) if TASK_METHODS.contains(&m) => params.task_id,
            _ => Lenient(None),
        };
        let arguments = match method.as_deref() {
            Some("tools/call") => params.arguments.map(ToOwned::to_owned),
            _ => None,
        };
        let cursor = match method.as_deref() {
            Some("tasks/list") => params.cursor.0.map(Cow::into_owned),
            _ => None,
        };
        let version = params.meta.0.and_then(|meta| meta.protocol_version.0);
        Some(Envelope {
            id,
            method,
            name: named.0.map(Cow::into_owned),
            protocol_version: version.map(Cow::into_owned),
            arguments,
            cursor,
        })
    }

    /// Where a `tasks/list` asks the listing to go on: after the task its cursor names, by
    /// listing order (creation time, then id; a 2025-11-25 cursor is `{created_ms}:{id}`).
    /// `None` for the first page, or a cursor that is not ours (the engine answers it
    /// -32602).
    pub fn list_after(&self) -> Option<(Millis, &str)> {
        crate::era::list_cursor(self.cursor.as_deref()?)
    }

    /// The id of a request (it has a method and an id): its reply ends its exchange.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.method.as_ref().and(self.id.as_ref())
    }

    /// Whether the method is one whose request names a task (`tasks/get`, `tasks/update`,
    /// `tasks/cancel`, `tasks/result`).
    pub fn names_a_task(&self) -> bool {
        self.method
            .as_deref()
            .is_some_and(|m| TASK_METHODS.contains(&m))
    }

    /// The task a `tasks/*` request names.
    pub fn task(&self) -> Option<&str> {
        self.name.as_deref().filter(|_| self.names_a_task())
    }

    /// The `_meta` key [`Envelope::protocol_version`] comes from.
    pub const VERSION_KEY: &'static str = VERSION_KEY;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_callers_route_on_and_nothing_more() {
        let e = Envelope::read(
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"e\u0063ho",
                "arguments":{"text":"hi"},
                "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        )
        .expect("an envelope");
        assert_eq!(e.request_id(), Some(&RequestId::Number(3)));
        assert_eq!(e.name.as_deref(), Some("echo"));
        assert_eq!(e.task(), None);
        assert_eq!(
            e.arguments.as_deref().map(RawValue::get),
            Some(r#"{"text":"hi"}"#)
        );
        assert_eq!(e.protocol_version.as_deref(), Some("2026-07-28"));
        let result = Envelope::read(
            br#"{"jsonrpc":"2.0","id":1,"method":"tasks/result","params":{"taskId":"t1"}}"#,
        );
        assert_eq!(result.expect("an envelope").task(), Some("t1"));
        let note = Envelope::read(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .expect("an envelope");
        assert_eq!(note.request_id(), None);
        // Fields of the wrong type are left out; the id stays, for the engine's error.
        let odd = Envelope::read(
            br#"{"jsonrpc":"2.0","id":"a","method":"tasks/get","params":{"taskId":7,"_meta":[]}}"#,
        )
        .expect("an envelope");
        assert_eq!(odd.request_id(), Some(&RequestId::String("a".into())));
        assert_eq!((odd.task(), odd.protocol_version.as_deref()), (None, None));
        let listed =
            Envelope::read(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#);
        assert_eq!(listed.expect("an envelope").name, None);
        assert!(Envelope::read(b"[1,2]").is_none());
        assert!(
            Envelope::read(br#" [1,"tools/list"]"#).is_none(),
            "no struct from an array"
        );
        // A JSON object that is no JSON-RPC message; responses still are.
        assert!(Envelope::read(br#"{"foo":1}"#).is_none());
        assert!(Envelope::read(br#"{"jsonrpc":"2.0","id":4}"#).is_none());
        let response = Envelope::read(br#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
        assert_eq!(response.expect("a response").request_id(), None);
        assert!(Envelope::read(b"not json").is_none());
        // Bytes that are no UTF-8 where the envelope reads nothing still make it none.
        assert!(Envelope::read(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\xe1\":1}}"
        )
        .is_none());
        // A request whose id is null is none: the engine answers it -32600.
        assert!(Envelope::read(br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).is_none());
        let unparsed = Envelope::read(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}"#);
        assert_eq!(unparsed.expect("a response").id, None);
    }
}
