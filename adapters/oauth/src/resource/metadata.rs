//! Protected Resource Metadata (RFC 9728): the document that tells a client which
//! authorization server issues tokens for this resource, and where that document is.

use serde_json::{json, Value};

use super::ResourceConfig;

/// The well-known path of the metadata, before the resource's own path.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The metadata document of the resource `config` describes.
pub(crate) fn document(config: &ResourceConfig) -> Value {
    let mut document = json!({
        "resource": config.resource,
        "authorization_servers": [config.issuer],
        "bearer_methods_supported": ["header"],
    });
    let scopes = config.scopes_supported();
    if !scopes.is_empty() {
        document["scopes_supported"] = json!(scopes);
    }
    document
}

/// The metadata's path on this server: the well-known path with the resource's path
/// appended (RFC 9728 §3.1), e.g. `/.well-known/oauth-protected-resource/mcp`.
pub(crate) fn path(resource: &url::Url) -> String {
    format!("{WELL_KNOWN}{}", resource.path().trim_end_matches('/'))
}

/// The metadata's URL, as `WWW-Authenticate` names it.
pub(crate) fn url(resource: &url::Url) -> String {
    format!(
        "{}{}",
        resource.origin().ascii_serialization(),
        path(resource)
    )
}

/// The path without the resource's: where clients that only try the root look.
pub(crate) fn root_path() -> &'static str {
    WELL_KNOWN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_path_appends_the_resource_path() {
        let mounted = url::Url::parse("https://mcp.example:8443/tenant/mcp").unwrap();
        assert_eq!(
            path(&mounted),
            "/.well-known/oauth-protected-resource/tenant/mcp"
        );
        assert_eq!(
            url(&mounted),
            "https://mcp.example:8443/.well-known/oauth-protected-resource/tenant/mcp"
        );
        let root = url::Url::parse("https://mcp.example/").unwrap();
        assert_eq!(path(&root), root_path());
    }

    #[test]
    fn the_document_names_the_issuer_and_the_scopes() {
        let mut config = ResourceConfig::new("https://mcp.example/mcp", "https://as.example");
        assert_eq!(
            document(&config),
            json!({"resource": "https://mcp.example/mcp",
                "authorization_servers": ["https://as.example"],
                "bearer_methods_supported": ["header"]})
        );
        config.scopes_required = vec!["mcp".into()];
        config.method_scopes.insert(
            "tasks/cancel".into(),
            vec!["tasks:write".into(), "mcp".into()],
        );
        assert_eq!(
            document(&config)["scopes_supported"],
            json!(["mcp", "tasks:write"])
        );
    }
}
