//! Writing JSON text straight into a `String`: the engine's own messages are built here
//! without an intermediate `Value` (the hot paths: replies, task objects, notifications).
//! Only numbers and times are written as bytes first (ASCII digits, checked as UTF-8 a few
//! bytes at a time, less than checking the whole line once).

use serde::Serialize;

use crate::time::Millis;

/// A message being written.
pub(crate) type Buf = String;

/// ASCII text written as bytes (digits, times), appended.
fn push_ascii(buf: &mut Buf, ascii: &[u8]) {
    buf.push_str(std::str::from_utf8(ascii).expect("ASCII"));
}

/// Appends `text` as a JSON string (quoted, escaped).
pub(crate) fn push_str(buf: &mut Buf, text: &str) {
    if needs_escape(text.as_bytes()) {
        push_serialized(buf, text);
    } else {
        buf.reserve(text.len() + 2);
        buf.push('"');
        buf.push_str(text);
        buf.push('"');
    }
}

/// Whether any byte is `"`, `\` or a control character.
fn needs_escape(bytes: &[u8]) -> bool {
    plain_prefix(bytes) < bytes.len()
}

/// The length of the longest prefix of `bytes` with no `"`, `\` or control character,
/// eight bytes at a time.
pub(crate) fn plain_prefix(bytes: &[u8]) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    // High bit set in each byte of `x` that is zero (exact for the lowest one, which is
    // all that is used).
    let zero = |x: u64| x.wrapping_sub(LO) & !x & HI;
    let mut at = 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in chunks.by_ref() {
        let x = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        // A byte below 0x20 has its top three bits clear.
        let special = (x.wrapping_sub(LO * 0x20) & !x & HI)
            | zero(x ^ (LO * u64::from(b'"')))
            | zero(x ^ (LO * u64::from(b'\\')));
        if special != 0 {
            // A flag means a real match in this chunk (the borrow trick only adds flags
            // above one); find it byte by byte.
            return at
                + chunk
                    .iter()
                    .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
                    .unwrap_or(8);
        }
        at += 8;
    }
    at + chunks
        .remainder()
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
        .unwrap_or(chunks.remainder().len())
}

/// The two-digit pairs "00".."99", for writing numbers two digits at a time.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

fn pair(n: u64) -> [u8; 2] {
    let i = (n as usize % 100) * 2;
    [PAIRS[i], PAIRS[i + 1]]
}

/// Appends an unsigned integer.
pub(crate) fn push_u64(buf: &mut Buf, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    while n >= 100 {
        i -= 2;
        digits[i..i + 2].copy_from_slice(&pair(n));
        n /= 100;
    }
    if n >= 10 {
        i -= 2;
        digits[i..i + 2].copy_from_slice(&pair(n));
    } else {
        i -= 1;
        digits[i] = b'0' + n as u8;
    }
    // A few digits: pushed one by one, cheaper than checking them as text.
    buf.reserve(digits.len() - i);
    for &digit in &digits[i..] {
        buf.push(char::from(digit));
    }
}

/// Appends a signed integer.
pub(crate) fn push_i64(buf: &mut Buf, n: i64) {
    if n < 0 {
        buf.push('-');
    }
    push_u64(buf, n.unsigned_abs());
}

/// Appends an instant as quoted RFC 3339 UTC text with milliseconds.
pub(crate) fn push_time(buf: &mut Buf, at: Millis) {
    let mut text = *b"\"0000-00-00T00:00:00.000Z\"";
    let c = at.civil();
    text[1..3].copy_from_slice(&pair(u64::from(c.year / 100)));
    text[3..5].copy_from_slice(&pair(u64::from(c.year)));
    text[6..8].copy_from_slice(&pair(u64::from(c.month)));
    text[9..11].copy_from_slice(&pair(u64::from(c.day)));
    text[12..14].copy_from_slice(&pair(u64::from(c.hour)));
    text[15..17].copy_from_slice(&pair(u64::from(c.minute)));
    text[18..20].copy_from_slice(&pair(u64::from(c.second)));
    text[21] = b'0' + (c.milli / 100) as u8;
    text[22..24].copy_from_slice(&pair(u64::from(c.milli)));
    push_ascii(buf, &text);
}

/// Appends any serializable value (for the colder paths that keep serde's types).
pub(crate) fn push_serialized<T: Serialize + ?Sized>(buf: &mut Buf, value: &T) {
    // Our types hold no maps with non-string keys, so serializing cannot fail.
    buf.push_str(&serde_json::to_string(value).expect("wire types serialize"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(f: impl FnOnce(&mut Buf)) -> String {
        let mut buf = Buf::new();
        f(&mut buf);
        buf
    }

    #[test]
    fn plain_prefix_stops_at_the_first_special_byte() {
        for text in [
            "",
            "abc",
            "abcdefgh",
            "abcdefghij\"k",
            "\"",
            "a\\b",
            "0123456\u{1}89",
            "é\"",
            "aaaaaaaa\"aaaaaaa\"",
        ] {
            let slow = text
                .bytes()
                .position(|b| b < 0x20 || b == b'"' || b == b'\\')
                .unwrap_or(text.len());
            assert_eq!(plain_prefix(text.as_bytes()), slow, "{text:?}");
        }
    }

    #[test]
    fn writes_what_serde_json_writes() {
        let texts = [
            "",
            "plain",
            "quote\"d",
            "back\\slash",
            "tab\tnew\nline",
            "\u{1}",
            "汉字 ✓",
            "eight by",
            "exactly 8 bytes then \" late",
            "\u{7f}\u{1f} ~",
            "0123456789abcdef\\",
        ];
        for text in texts {
            assert_eq!(
                written(|b| push_str(b, text)),
                serde_json::to_string(text).unwrap()
            );
        }
        for n in [
            0i64,
            7,
            -7,
            10,
            99,
            100,
            101,
            1234567890,
            i64::MIN,
            i64::MAX,
        ] {
            assert_eq!(written(|b| push_i64(b, n)), n.to_string());
        }
        assert_eq!(written(|b| push_u64(b, u64::MAX)), u64::MAX.to_string());
        let value = serde_json::json!({ "a": ["é", 1.5] });
        assert_eq!(
            written(|b| push_serialized(b, &value)),
            r#"{"a":["é",1.5]}"#
        );
    }

    #[test]
    fn times_match_the_text_formatter() {
        for ms in [
            0,
            1,
            999,
            1_768_467_600_123,
            951_782_400_000,
            crate::time::MAX_MILLIS.0,
        ] {
            let at = Millis(ms);
            assert_eq!(
                written(|b| push_time(b, at)),
                format!("\"{}\"", at.to_rfc3339())
            );
        }
    }
}
