//! The per-request `params._meta` of this era: protocol version and client capabilities
//! travel with every request, since there is no handshake.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::jsonrpc::{self, Reject, RpcError};
use crate::lenient::Lenient;
use crate::log_level::LogLevel;
use crate::model::InputKinds;
use crate::peer_error::PeerErrorKind;

/// The protocol version this era serves statelessly.
pub const VERSION: &str = "2026-07-28";
/// The tasks extension's identifier.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

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

/// `_meta` as a request carries it: its text, found while the method's own fields are read
/// (one pass), then read itself by [`read`] unless it is the text the last request carried.
#[derive(Debug, Default, Deserialize)]
#[serde(transparent)]
pub(super) struct Meta(Option<Box<RawValue>>);

/// The members of `_meta` the engine reads, without building values: what is wrong with them
/// is found by [`check`].
#[derive(Debug, Default, Deserialize)]
struct MetaFields<'a> {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default, borrow)]
    version: Seen<Cow<'a, str>>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    capabilities: Seen<Capabilities>,
    #[serde(rename = "progressToken", default)]
    progress_token: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", default)]
    log_level: Option<Value>,
}

/// The last `_meta` text that passed [`check`], and what it declares: a client sends the same
/// `_meta` with each request, so the next one that carries it is not read again.
#[derive(Debug, Default)]
pub(crate) struct LastMeta(Option<(Box<str>, RequestMeta)>);

/// A member that must have one type: absent (or `null`), of another type, or read.
#[derive(Debug, Default)]
enum Seen<T> {
    #[default]
    Absent,
    Mistyped,
    Is(T),
}

/// What the client capabilities declare that the engine reads.
#[derive(Clone, Debug, Default)]
struct Capabilities {
    tasks: bool,
    elicitation: bool,
    sampling: bool,
    roots: bool,
}

/// The `params` of a request of this era: the method's own fields and its `_meta` (a field
/// `#[serde(rename = "_meta", default)] meta: Meta`), read in one pass. They own what they
/// hold, so that they can be read from params with a known `_meta` taken out.
pub(super) trait Stateless: DeserializeOwned {
    /// Takes the `_meta` read with the fields.
    fn meta(&mut self) -> Meta;

    /// What a request of `method` names (a tool, a task), for the caller's check.
    fn name(&self, _method: &str) -> Option<&str> {
        None
    }

    /// A call's arguments, as sent, for the caller's check.
    fn arguments(&self) -> Option<&RawValue> {
        None
    }
}

/// Implements [`Stateless`] for params structs with a `meta` field (and the field that
/// holds what the request names, after `=>`).
macro_rules! stateless {
    ($($name:ident $(=> $named:ident)?),* $(,)?) => {$(
        impl $crate::era::v2026_07_28::meta::Stateless for $name {
            fn meta(&mut self) -> $crate::era::v2026_07_28::meta::Meta {
                std::mem::take(&mut self.meta)
            }
            $(fn name(&self, _method: &str) -> Option<&str> {
                Some(&self.$named)
            })?
        }
    )*};
}
pub(super) use stateless;

/// The params of a request read by [`read`].
pub(super) enum Read<P> {
    /// Not a request of this era (no protocol version in its `_meta`).
    NotOurs,
    /// Its `_meta` is wrong: the error it gets (-32602, -32022).
    Refused(Reject),
    /// Its checked `_meta`, and its fields or what is wrong with them (-32602), which the
    /// method reports after its own checks.
    Fields(Result<P, Reject>, RequestMeta),
}

/// A request's params with only its `_meta` (methods the engine reads no fields of), and
/// what an application's request may name (`name`, `uri`; when a string) for the caller's
/// check.
#[derive(Deserialize)]
pub(super) struct MetaOnly {
    #[serde(rename = "_meta", default)]
    meta: Meta,
    #[serde(default)]
    name: Lenient<String>,
    #[serde(default)]
    uri: Lenient<String>,
}

impl Stateless for MetaOnly {
    fn meta(&mut self) -> Meta {
        std::mem::take(&mut self.meta)
    }

    /// `params.uri` for `resources/read`, `params.name` otherwise.
    fn name(&self, method: &str) -> Option<&str> {
        match method {
            "resources/read" => self.uri.0.as_deref(),
            _ => self.name.0.as_deref(),
        }
    }
}

/// What one request declares about itself.
#[derive(Clone, Debug)]
pub(crate) struct RequestMeta {
    capabilities: Capabilities,
    /// The request's progress token.
    pub progress_token: Option<Value>,
    /// The least severe log message the request wants; none wants no log messages.
    pub log_level: Option<LogLevel>,
    /// The `_meta` as sent (shared with the requests that repeat it).
    pub raw: Option<Arc<RawValue>>,
}

/// Reads a request's params once, if the request is of this era (`server/discover` always
/// is; any other request when its `_meta` names a protocol version): the `_meta` checked
/// first (a missing required key is -32602, another version than ours -32022), then the
/// method's fields. A `_meta` the same as the `last` one checked is known already. The
/// caller has let go of the requests [`names_version`] rules out.
pub(super) fn read<P: Stateless>(
    params: Option<&str>,
    discover: bool,
    last: &mut LastMeta,
) -> Read<P> {
    let text = params.unwrap_or("{}");
    if let Some((known, declared)) = &last.0 {
        // The `_meta` the last request carried, first or last: only the rest is read.
        let rest = without_meta(text, known);
        if let Some(Ok(mut fields)) = rest.map(|rest| serde_json::from_str::<P>(&rest)) {
            // A second `_meta` would be an error: the whole text says which.
            if fields.meta().0.is_none() {
                return Read::Fields(Ok(fields), declared.clone());
            }
        }
    }
    let (meta, fields) = match serde_json::from_str::<P>(text) {
        Ok(mut fields) => (Ok(fields.meta().0), Ok(fields)),
        // Unchecked params that are no JSON value: not read here (see `jsonrpc::Params`).
        Err(error) if !error.is_data() => return Read::NotOurs,
        // The `_meta` comes first: read alone, its error (if any) is the answer.
        Err(error) => {
            let meta = serde_json::from_str::<MetaOnly>(text).map(|m| m.meta.0);
            (meta, Err(jsonrpc::params_error(&error)))
        }
    };
    if let (Ok(Some(raw)), Some((known, declared))) = (&meta, &last.0) {
        if raw.get() == &**known {
            return Read::Fields(fields, declared.clone());
        }
    }
    let (raw, unreadable) = match meta {
        Ok(raw) => (raw, None),
        Err(error) => (None, Some(error)),
    };
    let parsed = match (&raw, unreadable) {
        (_, Some(error)) => Err(error),
        (Some(raw), None) => serde_json::from_str(raw.get()),
        (None, None) => Ok(MetaFields::default()),
    };
    match parsed {
        Ok(MetaFields {
            version: Seen::Absent,
            ..
        })
        | Err(_)
            if !discover =>
        {
            Read::NotOurs
        }
        parsed => match check(parsed) {
            Ok(mut declared) => {
                declared.raw = raw.map(Arc::from);
                if let Some(raw) = &declared.raw {
                    last.0 = Some((raw.get().into(), declared.clone()));
                }
                Read::Fields(fields, declared)
            }
            Err(reject) => Read::Refused(reject),
        },
    }
}

/// `params` (an object's text) without its member `"_meta": meta`, when that is its first or
/// last member (compact, or with whitespace between tokens); `None` otherwise. What is left
/// is the object's other members: when it reads as a JSON object, `params` is one too,
/// whose `_meta` is `meta` (a valid JSON value, checked before).
fn without_meta(params: &str, meta: &str) -> Option<String> {
    const KEY: &str = "\"_meta\"";
    let inner = trim(params).strip_prefix('{')?.strip_suffix('}')?;
    let rest = match trim(inner).strip_suffix(meta) {
        // Last: `…, "_meta": M`.
        Some(before) => {
            let before = trim(before).strip_suffix(':')?;
            let before = trim(before).strip_suffix(KEY)?;
            if trim(before).is_empty() {
                // The only member.
                return Some("{}".to_owned());
            }
            trim(before).strip_suffix(',')?
        }
        // First: `"_meta": M, …`.
        None => {
            let after = trim(inner).strip_prefix(KEY)?;
            let after = trim(after).strip_prefix(':')?;
            let after = trim(after).strip_prefix(meta)?;
            trim(after).strip_prefix(',')?
        }
    };
    // `{, "_meta": M}` and `{"_meta": M, }` are no objects, though `{}` is.
    if trim(rest).is_empty() {
        return None;
    }
    let mut object = String::with_capacity(rest.len() + 2);
    object.push('{');
    object.push_str(rest);
    object.push('}');
    Some(object)
}

/// `text` without JSON whitespace at either end (byte by byte: whitespace is ASCII).
fn trim(text: &str) -> &str {
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let bytes = text.as_bytes();
    let start = bytes.iter().position(|b| !space(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !space(b))
        .map_or(start, |last| last + 1);
    // Both ends border ASCII (or the text's ends): they are character boundaries.
    text.get(start..end).unwrap_or_default()
}

fn check(parsed: Result<MetaFields<'_>, serde_json::Error>) -> Result<RequestMeta, Reject> {
    let meta = parsed.map_err(|e| {
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message);
        invalid_meta(None, format!("Invalid params: {message}"))
    })?;
    let version = match meta.version {
        Seen::Is(v) => v,
        Seen::Mistyped => {
            return Err(invalid_meta(
                Some(VERSION_KEY),
                format!("Invalid params: _meta[\"{VERSION_KEY}\"] must be a string"),
            ))
        }
        Seen::Absent => {
            return Err(invalid_meta(
                Some(VERSION_KEY),
                format!("Invalid params: missing params._meta[\"{VERSION_KEY}\"]"),
            ))
        }
    };
    let capabilities = match meta.capabilities {
        Seen::Is(caps) => caps,
        Seen::Mistyped => {
            return Err(invalid_meta(
                Some(CAPABILITIES_KEY),
                format!("Invalid params: _meta[\"{CAPABILITIES_KEY}\"] must be an object"),
            ))
        }
        Seen::Absent => {
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
            PeerErrorKind::UnsupportedVersion(version.into_owned()),
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
        raw: None,
    })
}

impl RequestMeta {
    /// Whether this request declares the tasks extension (any object under its key).
    pub fn declares_tasks(&self) -> bool {
        self.capabilities.tasks
    }

    /// The kinds of input this request's client can answer.
    pub fn input_kinds(&self) -> InputKinds {
        let c = &self.capabilities;
        InputKinds {
            elicitation: c.elicitation,
            sampling: c.sampling,
            roots: c.roots,
        }
    }
}

/// A visitor's answer to any number or boolean: `$answer` (the value is read).
macro_rules! other_scalars {
    ($de:lifetime, $value:ty, $answer:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<$value, E> {
            Ok($answer)
        }
        fn visit_i64<E>(self, _: i64) -> Result<$value, E> {
            Ok($answer)
        }
        fn visit_u64<E>(self, _: u64) -> Result<$value, E> {
            Ok($answer)
        }
        fn visit_f64<E>(self, _: f64) -> Result<$value, E> {
            Ok($answer)
        }
    };
}

/// A visitor's answer to any array: `$answer` (the array is read and dropped).
macro_rules! any_array {
    ($de:lifetime, $value:ty, $answer:expr) => {
        fn visit_seq<A: SeqAccess<$de>>(self, mut seq: A) -> Result<$value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($answer)
        }
    };
}

impl<'de: 'a, 'a> Deserialize<'de> for Seen<Cow<'a, str>> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = Seen<Cow<'de, str>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Seen::Is(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Seen::Is(Cow::Owned(s.to_owned())))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Seen::Absent)
            }
            other_scalars!('de, Self::Value, Seen::Mistyped);
            any_array!('de, Self::Value, Seen::Mistyped);
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Seen::Mistyped)
            }
        }
        d.deserialize_any(Text)
    }
}

impl<'de> Deserialize<'de> for Seen<Capabilities> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Caps;
        impl<'de> Visitor<'de> for Caps {
            type Value = Seen<Capabilities>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut caps = Capabilities::default();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "extensions" => caps.tasks = map.next_value::<Extensions>()?.0,
                        "elicitation" => caps.elicitation = map.next_value::<IsObject>()?.0,
                        "sampling" => caps.sampling = map.next_value::<IsObject>()?.0,
                        "roots" => caps.roots = map.next_value::<IsObject>()?.0,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Seen::Is(caps))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Seen::Absent)
            }
            other_scalars!('de, Self::Value, Seen::Mistyped);
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Seen::Mistyped)
            }
            any_array!('de, Self::Value, Seen::Mistyped);
        }
        d.deserialize_any(Caps)
    }
}

/// Whether a value is an object (read and dropped).
struct IsObject(bool);

impl<'de> Deserialize<'de> for IsObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> Visitor<'de> for Object {
            type Value = IsObject;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IsObject, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(IsObject(true))
            }
            any_array!('de, IsObject, IsObject(false));
            fn visit_unit<E>(self) -> Result<IsObject, E> {
                Ok(IsObject(false))
            }
            other_scalars!('de, IsObject, IsObject(false));
            fn visit_str<E>(self, _: &str) -> Result<IsObject, E> {
                Ok(IsObject(false))
            }
        }
        d.deserialize_any(Object)
    }
}

/// Whether `extensions` declares the tasks extension (an object under its key).
struct Extensions(bool);

impl<'de> Deserialize<'de> for Extensions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Declared;
        impl<'de> Visitor<'de> for Declared {
            type Value = Extensions;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Extensions, A::Error> {
                let mut tasks = false;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if key == EXTENSION {
                        tasks = map.next_value::<IsObject>()?.0;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Extensions(tasks))
            }
            any_array!('de, Extensions, Extensions(false));
            fn visit_unit<E>(self) -> Result<Extensions, E> {
                Ok(Extensions(false))
            }
            other_scalars!('de, Extensions, Extensions(false));
            fn visit_str<E>(self, _: &str) -> Result<Extensions, E> {
                Ok(Extensions(false))
            }
        }
        d.deserialize_any(Declared)
    }
}

/// Whether the params may carry the version key, cheaply: a 2025-11-25 request almost never
/// names it at all. A byte search for its `/`, then its tail, short enough for the standard
/// library's vectorised search (the whole key cost a tools/call ~1,600 instructions);
/// `initialize`'s `"protocolVersion"` has no slash before it.
pub(in crate::era) fn names_version(params: Option<&str>) -> bool {
    params
        .is_some_and(|text| text.as_bytes().contains(&b'/') && text.contains("/protocolVersion\""))
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

#[cfg(test)]
mod tests {
    use super::without_meta;

    const M: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;

    fn at(params: String) -> Option<String> {
        without_meta(&params, M)
    }

    #[test]
    fn a_known_meta_first_or_last_is_taken_out() {
        assert_eq!(
            at(format!(r#"{{"taskId":"t","_meta":{M}}}"#)).as_deref(),
            Some(r#"{"taskId":"t"}"#)
        );
        assert_eq!(
            at(format!(r#"{{"_meta":{M},"taskId":"t"}}"#)).as_deref(),
            Some(r#"{"taskId":"t"}"#)
        );
        assert_eq!(at(format!(r#"{{"_meta":{M}}}"#)).as_deref(), Some("{}"));
        // Python's json.dumps spacing.
        assert_eq!(
            at(format!(r#"{{"taskId": "t", "_meta": {M}}}"#)).as_deref(),
            Some(r#"{"taskId": "t"}"#)
        );
        assert_eq!(
            at(format!(r#" {{ "_meta" : {M} , "taskId": "t" }} "#)).as_deref(),
            Some(r#"{ "taskId": "t"}"#)
        );
    }

    #[test]
    fn anything_else_is_left_to_the_whole_read() {
        for params in [
            // Not first or last, another value, another key, no separator.
            format!(r#"{{"a":1,"_meta":{M},"b":2}}"#),
            r#"{"taskId":"t","_meta":{}}"#.to_owned(),
            format!(r#"{{"taskId":"t","meta":{M}}}"#),
            format!(r#"{{"taskId":"t" "_meta":{M}}}"#),
            // Commas with nothing beside them: no objects, though `{}` is.
            format!(r#"{{,"_meta":{M}}}"#),
            format!(r#"{{"_meta":{M},}}"#),
            format!("[{M}]"),
        ] {
            assert_eq!(at(params.clone()), None, "{params}");
        }
    }
}
