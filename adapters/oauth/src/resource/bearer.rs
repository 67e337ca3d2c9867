//! The bearer token of a request's `Authorization` headers (RFC 6750 §2.1), read strictly:
//! anything but exactly one `Bearer <token68>` header is refused, before any token is
//! looked at.

use super::Denial;

/// The token of `values` (the request's `Authorization` headers), or why there is none.
pub(crate) fn token<'a>(
    values: impl IntoIterator<Item = &'a [u8]>,
    max_bytes: usize,
) -> Result<&'a str, Denial> {
    let mut values = values.into_iter();
    let Some(value) = values.next() else {
        return Err(Denial::Missing);
    };
    if values.next().is_some() {
        return Err(Denial::Malformed(
            "more than one Authorization header".into(),
        ));
    }
    let Ok(value) = std::str::from_utf8(value) else {
        return Err(Denial::Malformed(
            "the Authorization header is not text".into(),
        ));
    };
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        // Another scheme (Basic, DPoP…) is no bearer token: the client has none yet.
        tracing::debug!(scheme, "a request without a bearer token");
        return Err(Denial::Missing);
    }
    let token = rest.trim_matches(' ');
    if token.is_empty() {
        return Err(Denial::Malformed(
            "the Authorization header says Bearer but carries no token".into(),
        ));
    }
    if token.len() > max_bytes {
        return Err(Denial::Invalid(format!(
            "the token is longer than {max_bytes} bytes (ResourceConfig::max_token_bytes)"
        )));
    }
    if !is_token68(token) {
        return Err(Denial::Malformed(
            "the bearer token has characters a token cannot have".into(),
        ));
    }
    Ok(token)
}

/// RFC 6750's `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_token68(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(values: &[&str]) -> Result<String, Denial> {
        token(values.iter().map(|v| v.as_bytes()), 64).map(str::to_owned)
    }

    #[test]
    fn one_bearer_header_with_a_token68_is_read() {
        assert_eq!(
            read(&["Bearer abc.DEF-_~+/=="]),
            Ok("abc.DEF-_~+/==".into())
        );
        assert_eq!(read(&["bearer  abc"]), Ok("abc".into()));
    }

    #[test]
    fn anything_else_is_refused_with_the_reason() {
        assert_eq!(read(&[]), Err(Denial::Missing));
        assert_eq!(read(&["Basic dXNlcjpwdw=="]), Err(Denial::Missing));
        for malformed in [
            &["Bearer"][..],
            &["Bearer "],
            &["Bearer a b"],
            &["Bearer a\"b"],
            &["Bearer ==="],
            &["Bearer a", "Bearer b"],
        ] {
            assert!(
                matches!(read(malformed), Err(Denial::Malformed(_))),
                "{malformed:?}"
            );
        }
        let huge = format!("Bearer {}", "a".repeat(65));
        assert!(matches!(read(&[&huge]), Err(Denial::Invalid(why)) if why.contains("64 bytes")));
        let latin1: &[u8] = b"Bearer \xe9";
        assert!(matches!(
            token([latin1], 64),
            Err(Denial::Malformed(why)) if why.contains("not text")
        ));
    }
}
