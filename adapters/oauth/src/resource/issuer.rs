//! The authorization server's metadata, as a resource server needs it: where its keys are
//! (`jwks_uri`) and where tokens are introspected. Read from the issuer's well-known
//! documents (RFC 8414, then OpenID Connect Discovery, in the order MCP clients try them),
//! once.

use serde_json::Value;

use super::fetch::Fetcher;
use crate::client::server_metadata_urls;

/// What the resource server uses of the issuer's metadata.
#[derive(Clone, Debug)]
pub(crate) struct IssuerMetadata {
    pub jwks_uri: Option<String>,
    pub introspection_endpoint: Option<String>,
}

/// The metadata of `issuer`, from the first of its well-known documents that names it as
/// its issuer.
pub(crate) async fn discover(fetcher: &Fetcher, issuer: &str) -> Result<IssuerMetadata, String> {
    let parsed = url::Url::parse(issuer).map_err(|e| format!("the issuer {issuer:?}: {e}"))?;
    let mut tried = Vec::new();
    for url in server_metadata_urls(&parsed) {
        let url = url.as_str();
        match fetcher.get(url).await {
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
