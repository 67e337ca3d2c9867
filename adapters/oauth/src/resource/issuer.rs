//! The authorization server's metadata, as a resource server needs it: where its keys are
//! (`jwks_uri`) and where tokens are introspected. Read from the issuer's well-known
//! documents (RFC 8414, then OpenID Connect Discovery), once.

use serde_json::Value;

use super::fetch::Fetcher;

/// What the resource server uses of the issuer's metadata.
#[derive(Clone, Debug)]
pub(crate) struct IssuerMetadata {
    pub jwks_uri: Option<String>,
    pub introspection_endpoint: Option<String>,
}

/// The metadata of `issuer`, from the first of its well-known documents that names it as
/// its issuer.
pub(crate) async fn discover(fetcher: &Fetcher, issuer: &str) -> Result<IssuerMetadata, String> {
    let mut tried = Vec::new();
    for url in well_known(issuer)? {
        match fetcher.get(&url).await {
            Ok(document) if document["issuer"].as_str() == Some(issuer) => {
                let field = |name: &str| document[name].as_str().map(str::to_owned);
                return Ok(IssuerMetadata {
                    jwks_uri: field("jwks_uri"),
                    introspection_endpoint: field("introspection_endpoint"),
                });
            }
            Ok(document) => tried.push(format!(
                "{url} names the issuer {} (RFC 8414 §3.3: it must be {issuer:?})",
                document.get("issuer").unwrap_or(&Value::Null)
            )),
            Err(why) => tried.push(why),
        }
    }
    Err(format!(
        "no metadata for the issuer {issuer}: {}",
        tried.join("; ")
    ))
}

/// The URLs an issuer's metadata may be at, in the order MCP clients try them: RFC 8414's
/// and OpenID's with the well-known part inserted before the issuer's path, then OpenID's
/// appended to it.
fn well_known(issuer: &str) -> Result<Vec<String>, String> {
    let url = url::Url::parse(issuer).map_err(|e| format!("the issuer {issuer:?}: {e}"))?;
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    Ok(urls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_urls_insert_then_append() {
        assert_eq!(
            well_known("https://as.example/").unwrap(),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            well_known("https://as.example/tenant1").unwrap(),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ]
        );
        assert!(well_known("not a url").is_err());
    }
}
