//! The `WWW-Authenticate: Bearer …` challenge of a `401` or `403` (RFC 6750 §3, RFC 9728 §5.1),
//! read leniently: quoted or bare values, any case of names, several challenges in one value
//! or over several headers.

/// What a server's Bearer challenge asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Challenge {
    /// Where the server's Protected Resource Metadata is (RFC 9728).
    pub resource_metadata: Option<String>,
    /// The scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// The error code: `invalid_token`, `insufficient_scope`, …
    pub error: Option<String>,
    /// The server's words about the error.
    pub error_description: Option<String>,
}

impl Challenge {
    /// The Bearer challenge among `values` (each one `WWW-Authenticate` header value), if any.
    pub fn from_headers<'a>(values: impl IntoIterator<Item = &'a str>) -> Option<Challenge> {
        values.into_iter().find_map(Challenge::parse)
    }

    /// The Bearer challenge in one `WWW-Authenticate` value, if it has one.
    pub fn parse(value: &str) -> Option<Challenge> {
        let params = challenges(value)
            .into_iter()
            .find(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))?
            .1;
        let find = |name: &str| {
            params
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        };
        Some(Challenge {
            resource_metadata: find("resource_metadata"),
            scope: find("scope"),
            error: find("error"),
            error_description: find("error_description"),
        })
    }

    /// The scopes the challenge names, in order, each once.
    pub fn scopes(&self) -> Vec<String> {
        crate::client::scopes::split(self.scope.as_deref().unwrap_or_default())
    }

    /// Whether the token was good but lacks scopes (`error="insufficient_scope"`).
    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// Each challenge in `value`: its scheme and its parameters (names in lower case).
fn challenges(value: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut found: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let mut rest = value;
    loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
        let end = rest
            .find(|c: char| c == ',' || c == '=' || c.is_whitespace())
            .unwrap_or(rest.len());
        let (token, after) = rest.split_at(end);
        if token.is_empty() {
            // A stray `=` (a token68's padding): skip it.
            match after.strip_prefix('=') {
                Some(more) => {
                    rest = more;
                    continue;
                }
                None => return found,
            }
        }
        let after = after.trim_start();
        match after.strip_prefix('=') {
            Some(value) if !value.starts_with('=') => {
                let (value, more) = param_value(value.trim_start());
                if let Some((_, params)) = found.last_mut() {
                    params.push((token.to_ascii_lowercase(), value));
                }
                rest = more;
            }
            _ => {
                found.push((token.to_owned(), Vec::new()));
                rest = after;
            }
        }
    }
}

/// One parameter's value (quoted, with `\` escapes, or bare) and what follows it.
fn param_value(text: &str) -> (String, &str) {
    let Some(quoted) = text.strip_prefix('"') else {
        let end = text
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(text.len());
        return (text[..end].to_owned(), &text[end..]);
    };
    let mut value = String::new();
    let mut chars = quoted.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => {
                if let Some((_, escaped)) = chars.next() {
                    value.push(escaped);
                }
            }
            '"' => return (value, &quoted[at + 1..]),
            c => value.push(c),
        }
    }
    (value, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_challenge_gives_its_parameters_quoted_or_not() {
        let challenge = Challenge::parse(
            r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp""#,
        )
        .unwrap();
        assert!(challenge.insufficient_scope());
        assert_eq!(challenge.scopes(), ["mcp:basic", "mcp:write"]);
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some("http://localhost:1/.well-known/oauth-protected-resource/mcp")
        );
        let bare = Challenge::parse("bearer Error=invalid_token,scope=read").unwrap();
        assert_eq!(bare.error.as_deref(), Some("invalid_token"));
        assert_eq!(bare.scope.as_deref(), Some("read"));
        assert!(!bare.insufficient_scope());
    }

    #[test]
    fn the_bearer_challenge_is_found_among_others() {
        let value = r#"Basic realm="a, b", DPoP algs="ES256", Bearer realm="mcp", scope="x""#;
        let challenge = Challenge::parse(value).unwrap();
        assert_eq!(challenge.scope.as_deref(), Some("x"));
        let token68 = Challenge::parse("Negotiate abc==, Bearer scope=\"y\"").unwrap();
        assert_eq!(token68.scope.as_deref(), Some("y"));
        let escaped = Challenge::parse(r#"Bearer error_description="say \"hi\"""#).unwrap();
        assert_eq!(escaped.error_description.as_deref(), Some(r#"say "hi""#));
        assert_eq!(Challenge::parse("Bearer").unwrap(), Challenge::default());
        assert_eq!(Challenge::parse(r#"Basic realm="x""#), None);
        assert_eq!(
            Challenge::from_headers(["Basic realm=x", "Bearer scope=z"])
                .unwrap()
                .scope
                .as_deref(),
            Some("z")
        );
    }
}
