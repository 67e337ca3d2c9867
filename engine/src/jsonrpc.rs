//! JSON-RPC 2.0 envelopes: request ids, error objects, parsing peer bytes, writing messages.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Error as _, IgnoredAny, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::json::{self, Buf};
use crate::peer_error::PeerErrorKind;

/// The JSON-RPC error codes MCP uses.
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available in this session.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters (also: unknown, expired or terminal tasks).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error (also: a task quota was reached).
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

    /// -32602: the parameters do not fit the method.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        RpcError::new(code::INVALID_PARAMS, message)
    }

    /// -32600: not a request we accept.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        RpcError::new(code::INVALID_REQUEST, message)
    }

    /// -32603: something went wrong on our side.
    pub fn internal(message: impl Into<String>) -> Self {
        RpcError::new(code::INTERNAL_ERROR, message)
    }

    /// -32601 for `method`.
    pub fn method_not_found(method: &str) -> Self {
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

/// A request we refuse: the error to answer with, and what to report when the peer is at fault.
#[derive(Debug)]
pub(crate) struct Reject {
    pub error: RpcError,
    pub kind: Option<PeerErrorKind>,
}

impl From<RpcError> for Reject {
    fn from(error: RpcError) -> Self {
        Reject { error, kind: None }
    }
}

impl Reject {
    pub fn peer(kind: PeerErrorKind, error: RpcError) -> Self {
        Reject {
            error,
            kind: Some(kind),
        }
    }
}

/// One parsed message from the peer, borrowing from the input line.
#[derive(Debug)]
pub(crate) enum Message<'a> {
    Request {
        id: RequestId,
        method: Cow<'a, str>,
        params: Params<'a>,
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

/// A request's `params` as its line carries them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Params<'a> {
    /// Checked to be exactly one JSON value; `None` when absent or `null`.
    Checked(Option<&'a RawValue>),
    /// The text the fast path found where `params` stand, not yet checked: a reader that
    /// reads it whole (serde, to the end) checks it in the same pass; [`Params::check`]
    /// checks it alone. Text that is no single JSON value means the line is not what the
    /// fast path took it for: [`parse_general`] reads it again.
    Unchecked(&'a str),
}

impl<'a> Params<'a> {
    /// The text; `None` when there are no params.
    pub fn text(self) -> Option<&'a str> {
        match self {
            Params::Checked(params) => params.map(RawValue::get),
            Params::Unchecked(text) => Some(text),
        }
    }

    /// The params, checked; `None` when the text is no single JSON value.
    pub fn check(self) -> Option<Option<&'a RawValue>> {
        match self {
            Params::Checked(params) => Some(params),
            Params::Unchecked(text) => params_value(text),
        }
    }

    /// The params if they are checked already.
    pub fn checked(self) -> Option<Option<&'a RawValue>> {
        match self {
            Params::Checked(params) => Some(params),
            Params::Unchecked(_) => None,
        }
    }
}

/// Why a line is not a message we can act on.
#[derive(Debug)]
pub(crate) struct Malformed {
    pub kind: PeerErrorKind,
    /// The error reply to send, with the request id when it could be read; `None` for a
    /// malformed response (nothing is answered).
    pub reply: Option<(Option<RequestId>, RpcError)>,
    pub message: String,
}

impl Malformed {
    fn reply(kind: PeerErrorKind, id: Option<RequestId>, error: RpcError) -> Box<Self> {
        Box::new(Malformed {
            kind,
            message: error.message.clone(),
            reply: Some((id, error)),
        })
    }

    fn ignore(message: String) -> Box<Self> {
        Box::new(Malformed {
            kind: PeerErrorKind::Malformed,
            reply: None,
            message,
        })
    }
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

/// The `id` member as read, without failing the envelope on a bad type.
#[derive(Debug, Default)]
enum IdField {
    #[default]
    Absent,
    Null,
    Valid(RequestId),
    Invalid,
}

impl<'de> Deserialize<'de> for IdField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IdField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a request id")
            }
            fn visit_i64<E>(self, n: i64) -> Result<IdField, E> {
                Ok(IdField::Valid(RequestId::Number(n)))
            }
            fn visit_u64<E>(self, n: u64) -> Result<IdField, E> {
                Ok(i64::try_from(n)
                    .map_or(IdField::Invalid, |n| IdField::Valid(RequestId::Number(n))))
            }
            fn visit_f64<E>(self, _: f64) -> Result<IdField, E> {
                Ok(IdField::Invalid)
            }
            fn visit_bool<E>(self, _: bool) -> Result<IdField, E> {
                Ok(IdField::Invalid)
            }
            fn visit_str<E>(self, s: &str) -> Result<IdField, E> {
                Ok(IdField::Valid(RequestId::String(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<IdField, E> {
                Ok(IdField::Valid(RequestId::String(s)))
            }
            fn visit_unit<E>(self) -> Result<IdField, E> {
                Ok(IdField::Null)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<IdField, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(IdField::Invalid)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<IdField, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(IdField::Invalid)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default)]
    id: IdField,
    /// Kept raw so that a method that is not a readable string (a number, a lone
    /// surrogate escape) is refused with the request's id rather than as a parse error.
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
/// JSON nested deeper than `max_depth` is refused before anything reads it.
pub(crate) fn parse(line: &[u8], max_depth: usize) -> Result<Message<'_>, Box<Malformed>> {
    let parse_error = |why: String| {
        Malformed::reply(
            PeerErrorKind::Parse,
            None,
            RpcError::new(code::PARSE_ERROR, why),
        )
    };
    let text = std::str::from_utf8(line)
        .map_err(|e| parse_error(format!("Parse error: invalid UTF-8 ({e})")))?;
    if text.trim_start().starts_with('[') {
        return Err(match serde_json::from_str::<IgnoredAny>(text) {
            Ok(_) => Malformed::reply(
                PeerErrorKind::Batch,
                None,
                RpcError::invalid_request("Invalid Request: JSON-RPC batches are not supported"),
            ),
            Err(e) => parse_error(format!("Parse error: {e}")),
        });
    }
    let too_deep = nested_deeper_than(line, max_depth);
    if !too_deep {
        if let Some(inbound) = parse_canonical(text) {
            return Ok(inbound);
        }
    }
    general(text, too_deep, max_depth)
}

/// Parses one line with the general JSON parser only (every request's params checked): for a
/// line whose unchecked params were no single JSON value (the fast path misread its shape).
pub(crate) fn parse_general(line: &[u8], max_depth: usize) -> Result<Message<'_>, Box<Malformed>> {
    match std::str::from_utf8(line) {
        Ok(text) => general(text, nested_deeper_than(line, max_depth), max_depth),
        // The line was checked as UTF-8 already by [`parse`].
        Err(_) => parse(line, max_depth),
    }
}

/// The general path of [`parse`]: a serde parse of the envelope.
fn general(text: &str, too_deep: bool, max_depth: usize) -> Result<Message<'_>, Box<Malformed>> {
    let parse_error = |why: String| {
        Malformed::reply(
            PeerErrorKind::Parse,
            None,
            RpcError::new(code::PARSE_ERROR, why),
        )
    };
    let env: Envelope<'_> = serde_json::from_str(text).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => Malformed::reply(
            PeerErrorKind::InvalidRequest,
            None,
            RpcError::invalid_request(format!("Invalid Request: {e}")),
        ),
        _ => parse_error(format!("Parse error: {e}")),
    })?;
    let is_response = env.method.is_none() && (env.result.is_some() || env.error.is_some());
    if too_deep {
        let id = match env.id {
            IdField::Valid(id) if !is_response => Some(id),
            _ => None,
        };
        let error = RpcError::invalid_request(format!(
            "Invalid Request: JSON nested deeper than {max_depth} levels"
        ));
        return Err(if is_response {
            Box::new(Malformed {
                kind: PeerErrorKind::TooDeep,
                message: error.message,
                reply: None,
            })
        } else {
            Malformed::reply(PeerErrorKind::TooDeep, id, error)
        });
    }
    if is_response {
        let IdField::Valid(id) = env.id else {
            return Err(Malformed::ignore(format!(
                "response without a usable id: {}",
                truncate(text, 200)
            )));
        };
        if env.jsonrpc.as_deref() != Some("2.0") {
            return Err(Malformed::ignore(format!(
                "response {id} lacks \"jsonrpc\":\"2.0\""
            )));
        }
        let outcome = match (env.result, env.error) {
            (Some(result), None) => Ok(result),
            (None, Some(error)) => Err(serde_json::from_str::<RpcError>(error.get())
                .unwrap_or_else(|e| RpcError::internal(format!("malformed error object: {e}")))),
            _ => {
                return Err(Malformed::ignore(format!(
                    "response {id} has both result and error"
                )))
            }
        };
        return Ok(Message::Response { id, outcome });
    }
    let id = match env.id {
        IdField::Absent => None,
        IdField::Valid(id) => Some(id),
        IdField::Null => return Err(invalid(None, "id must not be null")),
        IdField::Invalid => return Err(invalid(None, "id must be a string or an integer")),
    };
    if env.jsonrpc.as_deref() != Some("2.0") {
        return Err(invalid(id, "\"jsonrpc\" must be \"2.0\""));
    }
    let Some(method) = env.method else {
        return Err(invalid(id, "missing \"method\""));
    };
    let method: Cow<'_, str> = serde_json::from_str(method.get())
        .map_err(|_| invalid(id.clone(), "\"method\" must be a string"))?;
    if env.result.is_some() || env.error.is_some() {
        return Err(invalid(
            id,
            "a request cannot carry \"result\" or \"error\"",
        ));
    }
    let params = env.params.filter(|p| p.get() != "null");
    Ok(match id {
        Some(id) => Message::Request {
            id,
            method,
            params: Params::Checked(params),
        },
        None => Message::Notification { method, params },
    })
}

/// The fast path for the shape clients write, `{"jsonrpc":"2.0","id":…,"method":"…"}` with
/// optional `"params":…` last: read without a general JSON parse of the envelope. A request's
/// params are left unchecked ([`Params::Unchecked`]: the era that reads them checks them in
/// the same pass), a notification's are checked. The compact form is matched literally; the
/// same members with whitespace between tokens (Python's `json.dumps` writes `": "` and
/// `", "`) token by token. Anything else, including any escape in the id or method, gets
/// `None` and takes the general path.
fn parse_canonical(text: &str) -> Option<Message<'_>> {
    match text.strip_prefix(r#"{"jsonrpc":"2.0","#) {
        Some(rest) => parse_compact(rest),
        None => parse_spaced(text),
    }
}

/// The compact form, past `{"jsonrpc":"2.0",`.
#[inline]
fn parse_compact(rest: &str) -> Option<Message<'_>> {
    let (id, rest) = match rest.strip_prefix(r#""id":"#) {
        Some(rest) => {
            let (id, rest) = canonical_id(rest)?;
            (Some(id), rest.strip_prefix(',')?)
        }
        None => (None, rest),
    };
    let (method, rest) = plain_string(rest.strip_prefix(r#""method":"#)?)?;
    let params = match rest {
        "}" => None,
        tail => Some(tail.strip_prefix(r#","params":"#)?.strip_suffix('}')?),
    };
    message(id, method, params)
}

/// The same members with whitespace between tokens.
fn parse_spaced(text: &str) -> Option<Message<'_>> {
    let rest = member(token(text, '{')?, "jsonrpc")?;
    let rest = token(rest.strip_prefix(r#""2.0""#)?, ',')?;
    let (id, rest) = match member(rest, "id") {
        Some(rest) => {
            let (id, rest) = canonical_id(rest)?;
            (Some(id), token(rest, ',')?)
        }
        None => (None, rest),
    };
    let (method, rest) = plain_string(member(rest, "method")?)?;
    let rest = skip_whitespace(rest);
    let params = match rest.strip_prefix('}') {
        Some(end) if skip_whitespace(end).is_empty() => None,
        Some(_) => return None,
        None => {
            let raw = member(token(rest, ',')?, "params")?
                .trim_end_matches([' ', '\t', '\n', '\r'])
                .strip_suffix('}')?;
            Some(raw)
        }
    };
    message(id, method, params)
}

/// `params` checked to be one JSON value; `Some(None)` for `null`.
fn params_value(raw: &str) -> Option<Option<&RawValue>> {
    let params: &RawValue = serde_json::from_str(raw).ok()?;
    Some(Some(params).filter(|p| p.get() != "null"))
}

/// The message the fast path read: a request's params left unchecked (`null` is none), a
/// notification's checked.
fn message<'a>(
    id: Option<RequestId>,
    method: &'a str,
    params: Option<&'a str>,
) -> Option<Message<'a>> {
    let method = Cow::Borrowed(method);
    let params = params.map(|text| text.trim_end_matches([' ', '\t', '\n', '\r']));
    Some(match id {
        Some(id) => Message::Request {
            id,
            method,
            params: match params {
                None | Some("null") => Params::Checked(None),
                Some(text) => Params::Unchecked(text),
            },
        },
        None => Message::Notification {
            method,
            params: params.map_or(Some(None), params_value)?,
        },
    })
}

/// `text` past its leading JSON whitespace.
fn skip_whitespace(text: &str) -> &str {
    let blank = text
        .bytes()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .count();
    &text[blank..]
}

/// `text` past whitespace and then `c`.
fn token(text: &str, c: char) -> Option<&str> {
    skip_whitespace(text).strip_prefix(c)
}

/// `text` past `"name"`, its colon and the whitespace before the value.
fn member<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let rest = skip_whitespace(text).strip_prefix('"')?;
    let rest = rest.strip_prefix(name)?.strip_prefix('"')?;
    Some(skip_whitespace(token(rest, ':')?))
}

/// A JSON string without escapes at the start of `text` (which starts with its quote):
/// its contents and what follows it.
#[inline]
pub(crate) fn plain_string(text: &str) -> Option<(&str, &str)> {
    let body = text.strip_prefix('"')?;
    let end = json::plain_prefix(body.as_bytes());
    (body.as_bytes().get(end) == Some(&b'"')).then(|| (&body[..end], &body[end + 1..]))
}

/// A request id at the start of `text`: an integer, or a string without escapes.
#[inline]
fn canonical_id(text: &str) -> Option<(RequestId, &str)> {
    if text.starts_with('"') {
        let (id, rest) = plain_string(text)?;
        return Some((RequestId::String(id.to_owned()), rest));
    }
    let digits = text
        .bytes()
        .position(|b| b != b'-' && !b.is_ascii_digit())?;
    let n: i64 = text[..digits].parse().ok()?;
    // `-0` and leading zeros are not JSON's integers: let the general path judge them.
    let canonical = match text.as_bytes() {
        [b'0', b'0'..=b'9', ..] | [b'-', b'0', ..] => false,
        _ => digits > 0,
    };
    canonical.then(|| (RequestId::Number(n), &text[digits..]))
}

fn invalid(id: Option<RequestId>, why: &str) -> Box<Malformed> {
    Malformed::reply(
        PeerErrorKind::InvalidRequest,
        id,
        RpcError::invalid_request(format!("Invalid Request: {why}")),
    )
}

/// Whether arrays and objects nest deeper than `max` anywhere in `json` (strings skipped).
/// A text shorter than `max` bytes cannot, so short messages are not scanned.
fn nested_deeper_than(json: &[u8], max: usize) -> bool {
    // Cheap filters first: too short, or too few brackets in all (counted eight bytes at a
    // time), and the precise walk never runs.
    if json.len() <= max || crate::scan::count_either(json, b'[', b'{') <= max {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in json {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

fn truncate(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Deserializes `params` into `T`, naming the offending member in a -32602 error.
pub(crate) fn params<'a, T: Deserialize<'a>>(params: Option<&'a RawValue>) -> Result<T, Reject> {
    let text = params.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(|e| params_error(&e))
}

/// The -32602 for params serde could not read, naming the member when serde did.
pub(crate) fn params_error(e: &serde_json::Error) -> Reject {
    let msg = e.to_string();
    let msg = msg.split(" at line ").next().unwrap_or(&msg).to_owned();
    // serde names the member only for missing, unknown and duplicate fields (its other
    // messages quote the offending value instead).
    let field = ["missing field `", "unknown field `", "duplicate field `"]
        .iter()
        .find_map(|prefix| msg.strip_prefix(prefix))
        .and_then(|rest| rest.split_once('`'))
        .map(|(name, _)| name.to_owned());
    Reject::peer(
        PeerErrorKind::InvalidParams { field },
        RpcError::invalid_params(format!("Invalid params: {msg}")),
    )
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

const HEAD: &str = r#"{"jsonrpc":"2.0","#;

/// Appends a request id (a number or a string).
pub(crate) fn push_id(buf: &mut Buf, id: &RequestId) {
    match id {
        RequestId::Number(n) => json::push_i64(buf, *n),
        RequestId::String(s) => json::push_str(buf, s),
    }
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` with the result written by `body`.
pub(crate) fn reply_with(id: &RequestId, capacity: usize, body: impl FnOnce(&mut Buf)) -> String {
    let mut buf = Buf::with_capacity(capacity);
    buf.push_str(HEAD);
    buf.push_str(r#""id":"#);
    push_id(&mut buf, id);
    buf.push_str(r#","result":"#);
    body(&mut buf);
    buf.push('}');
    buf
}

/// A reply carrying any serializable result.
pub(crate) fn result_line<T: Serialize + ?Sized>(id: &RequestId, result: &T) -> String {
    reply_with(id, 128, |buf| json::push_serialized(buf, result))
}

/// `{"jsonrpc":"2.0","id":…,"error":…}`; the id is omitted when unknown.
pub(crate) fn error_line(id: Option<&RequestId>, error: &RpcError) -> String {
    let mut buf = Buf::with_capacity(96 + error.message.len());
    buf.push_str(HEAD);
    if let Some(id) = id {
        buf.push_str(r#""id":"#);
        push_id(&mut buf, id);
        buf.push(',');
    }
    buf.push_str(r#""error":"#);
    push_error(&mut buf, error);
    buf.push('}');
    buf
}

/// An error object: `{"code":…,"message":…,"data"?:…}`.
pub(crate) fn push_error(buf: &mut Buf, error: &RpcError) {
    buf.push_str(r#"{"code":"#);
    json::push_i64(buf, error.code);
    buf.push_str(r#","message":"#);
    json::push_str(buf, &error.message);
    if let Some(data) = &error.data {
        buf.push_str(r#","data":"#);
        json::push_serialized(buf, data);
    }
    buf.push('}');
}

/// A request line.
pub(crate) fn request_line<P: Serialize>(
    id: &RequestId,
    method: &str,
    params: Option<P>,
) -> String {
    let mut buf = Buf::with_capacity(128);
    buf.push_str(HEAD);
    buf.push_str(r#""id":"#);
    push_id(&mut buf, id);
    buf.push_str(r#","method":"#);
    json::push_str(&mut buf, method);
    if let Some(params) = params {
        buf.push_str(r#","params":"#);
        json::push_serialized(&mut buf, &params);
    }
    buf.push('}');
    buf
}

/// A notification line with params written by `body` (or none).
pub(crate) fn notification_with(method: &str, body: Option<&dyn Fn(&mut Buf)>) -> String {
    let mut buf = Buf::with_capacity(192);
    buf.push_str(HEAD);
    buf.push_str(r#""method":"#);
    json::push_str(&mut buf, method);
    if let Some(body) = body {
        buf.push_str(r#","params":"#);
        body(&mut buf);
    }
    buf.push('}');
    buf
}

/// A notification line with serializable params.
pub(crate) fn notification_line<P: Serialize>(method: &str, params: Option<P>) -> String {
    match params {
        Some(p) => notification_with(
            method,
            Some(&|buf: &mut Buf| json::push_serialized(buf, &p)),
        ),
        None => notification_with(method, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply_code(line: &str) -> (Option<RequestId>, i64) {
        match parse(line.as_bytes(), 128).map_err(|m| *m) {
            Err(Malformed {
                reply: Some((id, e)),
                ..
            }) => (id, e.code),
            other => panic!("{line}: expected an error reply, got {other:?}"),
        }
    }

    #[test]
    fn classifies_requests_notifications_and_responses() {
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#, 128),
            Ok(Message::Request { id: RequestId::String(s), .. }) if s == "a"
        ));
        assert!(matches!(
            parse(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":null}"#,
                128
            ),
            Ok(Message::Notification { params: None, .. })
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#, 128),
            Ok(Message::Response {
                id: RequestId::Number(7),
                outcome: Ok(_)
            })
        ));
        assert!(matches!(
            parse(
                br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}"#,
                128
            ),
            Ok(Message::Response {
                outcome: Err(RpcError { code: -32602, .. }),
                ..
            })
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"a\u002fb"}"#, 128),
            Ok(Message::Request { method, .. }) if method == "a/b"
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
            reply_code(r#"{"jsonrpc":"2.0","id":{"a":[1]},"method":"ping"}"#),
            (None, code::INVALID_REQUEST)
        );
        assert_eq!(
            reply_code(r#"{"jsonrpc":"2.0","id":1,"method":7}"#),
            (Some(RequestId::Number(1)), code::INVALID_REQUEST)
        );
        assert_eq!(
            reply_code(r#"{"jsonrpc":"2.0","id":1,"method":{"x":[]}}"#),
            (Some(RequestId::Number(1)), code::INVALID_REQUEST)
        );
        assert_eq!(
            reply_code(r#"{"jsonrpc":"2.0","id":1}"#),
            (Some(RequestId::Number(1)), code::INVALID_REQUEST)
        );
        assert!(matches!(
            parse(
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700}}"#,
                128
            )
            .map_err(|m| *m),
            Err(Malformed { reply: None, .. })
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
    fn the_canonical_shape_reads_like_the_general_path() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":-7,"method":"tasks/get","params":{"taskId":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":"a b","method":"x","params":null}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[1,{"b":"}"}]}}"#,
            r#"{"jsonrpc": "2.0", "id": 7, "method": "ping"}"#,
            r#"{ "jsonrpc" : "2.0" , "id" : "a" , "method" : "x" , "params" : { "b" : [ 1 ] } } "#,
        ];
        for line in lines {
            let fast = parse_canonical(line).expect(line);
            let general: Value = serde_json::from_str(line).unwrap();
            // The same members sorted (serde_json's map order), mostly not the fast path's shape.
            let mut reordered = serde_json::Map::new();
            for key in ["method", "params", "id", "jsonrpc"] {
                if let Some(v) = general.get(key) {
                    reordered.insert(key.to_owned(), v.clone());
                }
            }
            let reordered = Value::Object(reordered).to_string();
            let slow = parse_general(reordered.as_bytes(), 128).expect(line);
            assert_eq!(read_as(fast), read_as(slow), "{line}");
        }
        // Shapes the fast path leaves alone, or takes with params that do not check (the
        // host then reads the line with `parse_general`).
        for odd in [
            r#"{"jsonrpc":"2.0","id":007,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"a\"b","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"p\u0069ng"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{},"id":2}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1}} x"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":}"#,
            r#"{"jsonrpc":"2.0","id":99999999999999999999,"method":"x"}"#,
        ] {
            let taken = match parse_canonical(odd) {
                Some(Message::Request { params, .. }) => params.check().is_some(),
                Some(_) => true,
                None => false,
            };
            assert!(!taken, "{odd}");
        }
        // What the fast path leaves alone still parses, or is refused, on the general path.
        assert!(parse(br#"{"jsonrpc":"2.0","id":"a\"b","method":"ping"}"#, 128).is_ok());
        // A duplicate member the fast path cannot see: the general path refuses it.
        let misread = br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{},"id":2}"#;
        assert!(parse_general(misread, 128).is_err());
        assert!(parse_general(
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":}"#,
            128
        )
        .is_err());
    }

    /// A message's id, method and checked params (as values: whitespace aside).
    fn read_as(message: Message<'_>) -> String {
        let value =
            |p: Option<&RawValue>| p.map(|p| serde_json::from_str::<Value>(p.get()).unwrap());
        match message {
            Message::Request { id, method, params } => {
                let params = value(params.check().expect("params that check"));
                format!("request {id} {method} {params:?}")
            }
            Message::Notification { method, params } => {
                format!("notification {method} {:?}", value(params))
            }
            Message::Response { id, .. } => format!("response {id}"),
        }
    }

    #[test]
    fn nesting_past_the_limit_is_refused_with_the_id() {
        let nested = |depth: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":9,"method":"x","params":{{"a":{}1{}}}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            )
        };
        // params is depth 2 and the arrays add `depth`: 126 arrays reach exactly 128.
        assert!(parse(nested(126).as_bytes(), 128).is_ok());
        let refused = parse(nested(127).as_bytes(), 128).unwrap_err();
        assert_eq!(refused.kind, PeerErrorKind::TooDeep);
        assert_eq!(
            refused.reply.map(|(id, e)| (id, e.code)),
            Some((Some(RequestId::Number(9)), -32600))
        );
        assert!(parse(nested(10_000).as_bytes(), 128).is_err());
        // Brackets inside strings do not count.
        let quoted = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"s":"{}"}}}}"#,
            "[".repeat(500)
        );
        assert!(parse(quoted.as_bytes(), 128).is_ok());
    }

    #[test]
    fn invalid_utf8_is_a_parse_error() {
        assert!(matches!(
            parse(b"{\"a\":\"\xff\"}", 128).map_err(|m| *m),
            Err(Malformed {
                kind: PeerErrorKind::Parse,
                ..
            })
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
        assert_eq!(err.error.code, code::INVALID_PARAMS);
        assert!(
            err.error.message.contains("taskId"),
            "{}",
            err.error.message
        );
        assert_eq!(
            err.kind,
            Some(PeerErrorKind::InvalidParams {
                field: Some("taskId".into())
            })
        );
    }

    #[test]
    fn writers_match_serde_output() {
        let id = RequestId::String("a\"b".into());
        let error = RpcError::invalid_params("no \"such\" task")
            .with_data(serde_json::json!({"taskId": "t"}));
        let line: Value = serde_json::from_str(&error_line(Some(&id), &error)).unwrap();
        assert_eq!(
            line,
            serde_json::json!({"jsonrpc":"2.0","id":"a\"b","error":{"code":-32602,"message":"no \"such\" task","data":{"taskId":"t"}}})
        );
        let line: Value =
            serde_json::from_str(&result_line(&RequestId::Number(-3), &serde_json::json!({})))
                .unwrap();
        assert_eq!(
            line,
            serde_json::json!({"jsonrpc":"2.0","id":-3,"result":{}})
        );
    }
}
