//! Finding who gives tokens for a server: its Protected Resource Metadata (RFC 9728) at the
//! challenge's `resource_metadata`, else at the well-known URIs in the spec's order, then its
//! authorization server's metadata in the spec's order (RFC 8414, then OpenID Connect). A
//! server without any (MCP 2025-03-26) has its origin as authorization server.

use serde::de::DeserializeOwned;
use url::Url;

use super::challenge::Challenge;
use super::error::OAuthError;
use super::metadata::{ResourceMetadata, ServerMetadata};

/// What discovery found for one server.
#[derive(Clone, Debug)]
pub(crate) struct Discovered {
    /// The `resource` parameter: the metadata's identifier exactly, or the server's URL.
    pub resource: String,
    /// The resource's metadata (none from a 2025-03-26 server).
    pub resource_metadata: Option<ResourceMetadata>,
    /// Its authorization server's metadata.
    pub server: ServerMetadata,
}

/// The Protected Resource Metadata URLs of `server`, in the order to try them: the
/// path-suffixed one (`/.well-known/oauth-protected-resource/mcp`), then the root one.
pub fn resource_metadata_urls(server: &Url) -> Vec<Url> {
    well_known(server, &["oauth-protected-resource"], false)
}

/// The authorization server metadata URLs of `issuer`, in the order to try them. With a path:
/// RFC 8414 path-inserted, OpenID Connect path-inserted, OpenID Connect path-appended; without:
/// `/.well-known/oauth-authorization-server`, then `/.well-known/openid-configuration`.
pub fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    well_known(
        issuer,
        &["oauth-authorization-server", "openid-configuration"],
        true,
    )
}

/// The well-known URLs of `base` for each of `names`: path-inserted ones first, and with
/// `appended` an OpenID path-appended one; the root ones when `base` has no path, and for a
/// resource after its path-suffixed one.
fn well_known(base: &Url, names: &[&str], appended: bool) -> Vec<Url> {
    let path = base.path().trim_end_matches('/');
    let origin = base.origin().ascii_serialization();
    let mut urls: Vec<String> = Vec::new();
    if path.is_empty() {
        urls.extend(
            names
                .iter()
                .map(|name| format!("{origin}/.well-known/{name}")),
        );
    } else {
        urls.extend(
            names
                .iter()
                .map(|name| format!("{origin}/.well-known/{name}{path}")),
        );
        if appended {
            urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
        } else {
            urls.extend(
                names
                    .iter()
                    .map(|name| format!("{origin}/.well-known/{name}")),
            );
        }
    }
    urls.iter().filter_map(|url| Url::parse(url).ok()).collect()
}

/// Whether a Protected Resource Metadata `resource` may stand for `server`: the same origin,
/// and a path that is the server's or one of its parents (so one resource can cover the paths
/// below it, as a root metadata document does).
pub fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(resource) = Url::parse(resource) else {
        return false;
    };
    if resource.origin() != server.origin() || resource.fragment().is_some() {
        return false;
    }
    let parent = resource.path().trim_end_matches('/');
    let path = server.path().trim_end_matches('/');
    path == parent || path.starts_with(&format!("{parent}/"))
}

/// Whether metadata's `issuer` is the issuer its URL was built from (RFC 8414 §3.3: identical;
/// a trailing slash on either side is let pass).
fn issuer_matches(issuer: &str, expected: &str) -> bool {
    issuer.trim_end_matches('/') == expected.trim_end_matches('/')
}

/// Finds `server`'s resource metadata and authorization server, checking that each document
/// is about what it was asked for.
pub(crate) async fn discover(
    http: &reqwest::Client,
    server: &Url,
    challenge: &Challenge,
) -> Result<Discovered, OAuthError> {
    let mut candidates: Vec<Url> = Vec::new();
    if let Some(url) = challenge.resource_metadata.as_deref() {
        match Url::parse(url) {
            Ok(url) => candidates.push(url),
            Err(e) => tracing::debug!(url, error = %e, "an unreadable resource_metadata URL"),
        }
    }
    candidates.extend(resource_metadata_urls(server));
    let Some(resource) = first::<ResourceMetadata>(http, &candidates).await? else {
        return legacy(http, server).await;
    };
    if !resource_matches(&resource.resource, server) {
        return Err(OAuthError::Mismatch(format!(
            "the Protected Resource Metadata of {server} names the resource {:?}: a token for it \
             must not be sent to this server (is the URL the server's own?)",
            resource.resource
        )));
    }
    let Some(issuer) = resource.authorization_servers.first().cloned() else {
        return Err(OAuthError::Discovery(format!(
            "the Protected Resource Metadata of {server} names no authorization server"
        )));
    };
    let issuer_url = Url::parse(&issuer).map_err(|e| {
        OAuthError::Discovery(format!(
            "the authorization server {issuer:?} is no URL: {e}"
        ))
    })?;
    let urls = server_metadata_urls(&issuer_url);
    let Some(metadata) = first::<ServerMetadata>(http, &urls).await? else {
        return Err(OAuthError::Discovery(format!(
            "the authorization server {issuer} publishes no metadata (tried {})",
            list(&urls)
        )));
    };
    if !issuer_matches(&metadata.issuer, &issuer) {
        return Err(OAuthError::Mismatch(format!(
            "the metadata of the authorization server {issuer} names the issuer {:?}: it may \
             not be that server's, so it is not used",
            metadata.issuer
        )));
    }
    Ok(Discovered {
        resource: resource.resource.clone(),
        resource_metadata: Some(resource),
        server: metadata,
    })
}

/// A server without Protected Resource Metadata (MCP 2025-03-26): its origin is the
/// authorization server, with its metadata or else the default endpoints.
async fn legacy(http: &reqwest::Client, server: &Url) -> Result<Discovered, OAuthError> {
    let origin = server.origin().ascii_serialization();
    tracing::debug!(%server, "no Protected Resource Metadata: the origin is the authorization server");
    let urls = Url::parse(&origin)
        .map(|url| server_metadata_urls(&url))
        .unwrap_or_default();
    let metadata = first::<ServerMetadata>(http, &urls).await?;
    let mut resource = server.clone();
    resource.set_fragment(None);
    Ok(Discovered {
        resource: resource.to_string(),
        resource_metadata: None,
        server: metadata.unwrap_or_else(|| ServerMetadata::defaults(&origin)),
    })
}

/// The first of `urls` that answers `200` with a document of type `T`.
async fn first<T: DeserializeOwned>(
    http: &reqwest::Client,
    urls: &[Url],
) -> Result<Option<T>, OAuthError> {
    for url in urls {
        let response = http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| OAuthError::Discovery(format!("cannot GET {url}: {e}")))?;
        if !response.status().is_success() {
            tracing::debug!(%url, status = %response.status(), "no metadata there");
            continue;
        }
        match response.json::<T>().await {
            Ok(document) => return Ok(Some(document)),
            Err(e) => tracing::debug!(%url, error = %e, "unreadable metadata"),
        }
    }
    Ok(None)
}

/// `urls` as one line.
fn list(urls: &[Url]) -> String {
    urls.iter().map(Url::as_str).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(found: Vec<Url>) -> Vec<String> {
        found.into_iter().map(String::from).collect()
    }

    #[test]
    fn resource_metadata_is_looked_for_path_suffixed_then_at_the_root() {
        let server = Url::parse("https://example.com:8443/mcp?x=1").unwrap();
        assert_eq!(
            urls(resource_metadata_urls(&server)),
            [
                "https://example.com:8443/.well-known/oauth-protected-resource/mcp",
                "https://example.com:8443/.well-known/oauth-protected-resource",
            ]
        );
        let root = Url::parse("https://example.com/").unwrap();
        assert_eq!(
            urls(resource_metadata_urls(&root)),
            ["https://example.com/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn server_metadata_is_looked_for_in_the_specs_order() {
        let tenant = Url::parse("https://auth.example.com/tenant1/").unwrap();
        assert_eq!(
            urls(server_metadata_urls(&tenant)),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        let root = Url::parse("https://auth.example.com").unwrap();
        assert_eq!(
            urls(server_metadata_urls(&root)),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn a_resource_matches_its_server_or_a_parent_of_its_path_on_the_same_origin() {
        let server = Url::parse("http://localhost:3000/mcp").unwrap();
        assert!(resource_matches("http://localhost:3000/mcp", &server));
        assert!(resource_matches("http://localhost:3000", &server));
        assert!(resource_matches("http://localhost:3000/", &server));
        assert!(!resource_matches("https://evil.example.com/mcp", &server));
        assert!(!resource_matches("http://localhost:3001/mcp", &server));
        assert!(!resource_matches("http://localhost:3000/mcp2", &server));
        assert!(!resource_matches("http://localhost:3000/mc", &server));
        assert!(!resource_matches("not a url", &server));
    }

    #[test]
    fn an_issuer_must_be_the_one_asked_for() {
        assert!(issuer_matches("https://a.example", "https://a.example/"));
        assert!(!issuer_matches(
            "https://attacker.example.com",
            "https://a.example"
        ));
    }
}
