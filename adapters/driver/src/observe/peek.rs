//! What the request metrics read of a message before the engine does: its top-level `id` and
//! `method`, in one quick pass that stops once it has both (clients write them before
//! `params`) and allocates nothing for integer ids (the engine's own read is not shown to
//! the driver). A message it cannot read this way (no object, an escaped method name) is
//! not timed; the engine answers it.

use taskwire_engine::RequestId;

/// A request as the metrics see it.
pub(crate) struct Peeked<'a> {
    pub id: RequestId,
    pub method: &'a [u8],
}

/// How most clients begin a request (serde, pydantic, most SDKs): read without a scan.
const COMPACT: &[u8] = br#"{"jsonrpc":"2.0","id":"#;

/// The request `message` is, if it is one this pass can read.
pub(crate) fn request(message: &[u8]) -> Option<Peeked<'_>> {
    if let Some(rest) = message.strip_prefix(COMPACT) {
        if let Some(peeked) = compact(rest) {
            return Some(peeked);
        }
    }
    scan(message)
}

/// `…"id":` read, the id then `,"method":"…"` right after it, as compact JSON has them.
fn compact(rest: &[u8]) -> Option<Peeked<'_>> {
    let (id, after) = match rest.first()? {
        b'"' => {
            let end = string_end(rest, 0)?;
            (request_id(&rest[..end])?, &rest[end..])
        }
        _ => leading_integer(rest)?,
    };
    let method = after.strip_prefix(br#","method":""#)?;
    let end = method.iter().position(|b| matches!(b, b'"' | b'\\'))?;
    (method[end] == b'"').then_some(Peeked {
        id,
        method: &method[..end],
    })
}

/// The integer id `rest` starts with (at most 18 digits), and what follows it, in one pass.
fn leading_integer(rest: &[u8]) -> Option<(RequestId, &[u8])> {
    let (negative, digits) = match rest.split_first()? {
        (b'-', digits) => (true, digits),
        _ => (false, rest),
    };
    let mut n = 0i64;
    let mut len = 0;
    for &byte in digits.iter().take(19) {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        n = n * 10 + i64::from(digit);
        len += 1;
    }
    if len == 0 || len > 18 {
        return None;
    }
    Some((
        RequestId::Number(if negative { -n } else { n }),
        &digits[len..],
    ))
}

/// Any object: its members read in turn, nested values skipped whole.
fn scan(message: &[u8]) -> Option<Peeked<'_>> {
    let mut at = skip_space(message, 0);
    if message.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    let (mut id, mut method) = (None, None);
    loop {
        at = skip_space(message, at);
        if message.get(at) != Some(&b'"') {
            break;
        }
        let key_end = string_end(message, at)?;
        let key = &message[at + 1..key_end - 1];
        at = skip_space(message, key_end);
        if message.get(at) != Some(&b':') {
            return None;
        }
        let start = skip_space(message, at + 1);
        let end = value_end(message, start)?;
        let value = &message[start..end];
        match key {
            b"id" => id = Some(request_id(value)?),
            b"method" => method = Some(plain_string(value)?),
            _ => {}
        }
        if id.is_some() && method.is_some() {
            break;
        }
        at = skip_space(message, end);
        if message.get(at) != Some(&b',') {
            break;
        }
        at += 1;
    }
    Some(Peeked {
        id: id?,
        method: method?,
    })
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        at += 1;
    }
    at
}

/// Past the closing quote of the string opening at `at` (a plain loop: the strings before
/// `params` are a few bytes long).
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    loop {
        match bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// Past the value starting at `at` (objects and arrays skipped whole).
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while let Some(&b) = bytes.get(i) {
                match b {
                    b'"' => {
                        i = string_end(bytes, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let rest = &bytes[at..];
            let len = rest
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(rest.len());
            Some(at + len)
        }
    }
}

/// An id: an integer, or a string without escapes.
fn request_id(value: &[u8]) -> Option<RequestId> {
    if value.first() == Some(&b'"') {
        let text = std::str::from_utf8(plain_string(value)?).ok()?;
        return Some(RequestId::String(text.to_owned()));
    }
    let (id, rest) = leading_integer(value)?;
    rest.is_empty().then_some(id)
}

/// A string's content, when it has no escapes.
fn plain_string(value: &[u8]) -> Option<&[u8]> {
    let inner = value.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    (!inner.contains(&b'\\')).then_some(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(message: &str) -> Option<(RequestId, String)> {
        let peeked = request(message.as_bytes())?;
        let method = String::from_utf8(peeked.method.to_vec()).ok()?;
        Some((peeked.id, method))
    }

    #[test]
    fn reads_the_id_and_method_wherever_they_are() {
        let number = |n| Some((RequestId::Number(n), "tools/call".to_owned()));
        assert_eq!(
            read(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#),
            number(7)
        );
        assert_eq!(
            read(
                r#" { "params" : {"a":[1,{"b":"}]\"{"}],"c":"x"}, "method":"tools/call" , "id" : 7 } "#
            ),
            number(7)
        );
        assert_eq!(
            read(r#"{"id":"a-1","method":"ping"}"#),
            Some((RequestId::String("a-1".into()), "ping".into()))
        );
        assert_eq!(
            read(r#"{"id":-12,"method":"ping"}"#),
            Some((RequestId::Number(-12), "ping".into()))
        );
        assert_eq!(
            read(r#"{"jsonrpc":"2.0","id":-123456789012345678,"method":"ping"}"#),
            Some((RequestId::Number(-123456789012345678), "ping".into()))
        );
    }

    #[test]
    fn leaves_what_it_cannot_read_to_the_engine() {
        for message in [
            r#"{"method":"notifications/initialized"}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"id":1,"method":"to\"ols/call"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"to\"ols/call"}"#,
            r#"{"jsonrpc":"2.0","id":"a\"b","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1234567890123456789,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":-,"method":"ping"}"#,
            r#"{"id":"a\"b","method":"ping"}"#,
            r#"{"id":1.5,"method":"ping"}"#,
            r#"[{"id":1,"method":"ping"}]"#,
            r#"{"params":{"id":1,"method":"ping""#,
            "",
            "{",
        ] {
            assert!(read(message).is_none(), "{message}");
        }
    }
}
