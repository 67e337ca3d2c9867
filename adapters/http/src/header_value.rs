//! Header values in the `=?base64?…?=` form (SEP-2243): a value that cannot travel as plain
//! header text (not ASCII, control characters, surrounding whitespace, or text that itself
//! looks like the form) travels as the standard Base64 of its UTF-8, between these exact,
//! lowercase markers. `Mcp-Name` and `Mcp-Param-*` values are decoded before a server
//! compares them with the body.

use std::borrow::Cow;

use axum::http::HeaderValue;
use base64::Engine;

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// Text as an `Mcp-Name` or `Mcp-Param-*` value: as is when it is printable ASCII without
/// surrounding whitespace and does not look like the encoded form, otherwise the Base64 form
/// of its UTF-8 (so any tool name, URI, task id or string argument can be sent).
pub(crate) fn encode(text: &str) -> String {
    let printable = text.bytes().all(|b| (0x20..=0x7e).contains(&b)) && text.trim() == text;
    let looks_encoded = text.starts_with(PREFIX) && text.ends_with(SUFFIX);
    match printable && !looks_encoded {
        true => text.to_owned(),
        false => format!(
            "{PREFIX}{}{SUFFIX}",
            base64::engine::general_purpose::STANDARD.encode(text)
        ),
    }
}

/// The text a header value carries: the Base64 form decoded, any other value as it is.
/// `Err` says why when the value is no header text (bytes outside visible ASCII, space and
/// tab) or its Base64 form does not decode (bad alphabet or padding, not UTF-8).
pub(crate) fn decode(value: &HeaderValue) -> Result<Cow<'_, str>, String> {
    let text = value
        .to_str()
        .map_err(|_| "it is not ASCII text (send such a value as =?base64?…?=)".to_owned())?;
    let Some(encoded) = text
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
    else {
        return Ok(Cow::Borrowed(text));
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| format!("its =?base64?…?= form does not decode ({e})"))?;
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| "its =?base64?…?= form is not UTF-8".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(value: &[u8]) -> Result<String, String> {
        let value = HeaderValue::from_bytes(value).expect("a header value");
        decode(&value).map(Cow::into_owned)
    }

    #[test]
    fn text_that_is_no_plain_header_value_or_looks_encoded_is_base64() {
        for (text, sent) in [
            ("task-1", "task-1"),
            ("a b", "a b"),
            ("bad\nid", "=?base64?YmFkCmlk?="),
            (" padded", "=?base64?IHBhZGRlZA==?="),
            ("日本", "=?base64?5pel5pys?="),
            ("=?base64?SGk=?=", "=?base64?PT9iYXNlNjQ/U0drPT89?="),
            ("=?base64?", "=?base64?"),
        ] {
            assert_eq!(encode(text), sent, "{text:?}");
            let value = HeaderValue::from_str(&encode(text)).expect("a header value");
            assert_eq!(decode(&value).expect("decodes"), text, "{text:?}");
        }
    }

    #[test]
    fn the_base64_form_is_decoded_and_anything_else_is_literal() {
        assert_eq!(decoded(b"echo").as_deref(), Ok("echo"));
        assert_eq!(decoded(b"=?base64?ZWNobw==?=").as_deref(), Ok("echo"));
        assert_eq!(decoded(b"=?base64?IOS4lueVjA==?=").as_deref(), Ok(" 世界"));
        assert_eq!(decoded(b"=?base64??=").as_deref(), Ok(""));
        // Without both exact markers the value is literal.
        assert_eq!(
            decoded(b"=?base64?ZWNobw==").as_deref(),
            Ok("=?base64?ZWNobw==")
        );
        assert_eq!(
            decoded(b"=?BASE64?ZWNobw==?=").as_deref(),
            Ok("=?BASE64?ZWNobw==?=")
        );
        assert_eq!(decoded(b"ZWNobw==").as_deref(), Ok("ZWNobw=="));
    }

    #[test]
    fn a_broken_form_or_raw_bytes_are_refused() {
        // Missing padding, characters outside the alphabet, bytes that are not UTF-8.
        assert!(decoded(b"=?base64?SGVsbG8?=").is_err());
        assert!(decoded(b"=?base64?SGVs!!!bG8=?=").is_err());
        assert!(decoded(b"=?base64?/w==?=").is_err());
        assert!(decoded("é".as_bytes()).is_err());
    }
}
