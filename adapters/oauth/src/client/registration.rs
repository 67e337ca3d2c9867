//! The client's identity at an authorization server, in the spec's order of preference: one
//! registered beforehand and given by the user, a Client ID Metadata Document (the `client_id`
//! is the URL of the client's metadata), or dynamic registration (RFC 7591). And how the
//! client authenticates at the token endpoint.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::error::OAuthError;
use super::metadata::ServerMetadata;

/// A client's registration at one authorization server (its `Debug` shows no secret).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRegistration {
    /// The client's id (for a metadata document, its HTTPS URL).
    pub client_id: String,
    /// Its secret, for a confidential client.
    #[serde(default)]
    pub client_secret: Option<String>,
    /// How it authenticates at the token endpoint, when the registration says so.
    #[serde(default)]
    pub auth_method: Option<AuthMethod>,
}

impl ClientRegistration {
    /// A client registered beforehand: its id and, for a confidential client, its secret.
    pub fn new(client_id: impl Into<String>, client_secret: Option<String>) -> Self {
        ClientRegistration {
            client_id: client_id.into(),
            client_secret,
            auth_method: None,
        }
    }
}

impl std::fmt::Debug for ClientRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRegistration")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

/// How a client authenticates at the token endpoint (RFC 7591 §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMethod {
    /// Its id and secret as HTTP Basic credentials.
    ClientSecretBasic,
    /// Its id and secret in the form body.
    ClientSecretPost,
    /// Its id in the form body only (a public client).
    None,
}

impl AuthMethod {
    /// The name the metadata uses.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::ClientSecretBasic => "client_secret_basic",
            AuthMethod::ClientSecretPost => "client_secret_post",
            AuthMethod::None => "none",
        }
    }

    /// How `registration` authenticates at a server that takes `supported` (absent:
    /// `client_secret_basic`, RFC 8414): as registered; without a secret, `none`; with one,
    /// Basic when the server takes it, else the form body.
    pub fn choose(registration: &ClientRegistration, supported: Option<&[String]>) -> AuthMethod {
        if let Some(registered) = registration.auth_method {
            return registered;
        }
        if registration.client_secret.is_none() {
            return AuthMethod::None;
        }
        let takes = |method: AuthMethod| {
            supported.is_none_or(|all| all.iter().any(|m| m == method.as_str()))
        };
        match takes(AuthMethod::ClientSecretBasic) {
            false if takes(AuthMethod::ClientSecretPost) => AuthMethod::ClientSecretPost,
            _ => AuthMethod::ClientSecretBasic,
        }
    }

    /// What a dynamic registration asks for at a server that takes `supported`: `none` (a
    /// native client keeps no secret well) when taken or unsaid, else Basic, else the body.
    fn wanted(supported: Option<&[String]>) -> AuthMethod {
        let Some(all) = supported else {
            return AuthMethod::None;
        };
        [
            AuthMethod::None,
            AuthMethod::ClientSecretBasic,
            AuthMethod::ClientSecretPost,
        ]
        .into_iter()
        .find(|method| all.iter().any(|m| m == method.as_str()))
        .unwrap_or(AuthMethod::None)
    }

    fn parse(name: &str) -> Option<AuthMethod> {
        [
            AuthMethod::None,
            AuthMethod::ClientSecretBasic,
            AuthMethod::ClientSecretPost,
        ]
        .into_iter()
        .find(|method| method.as_str() == name)
    }
}

/// The client's side of a dynamic registration.
pub(crate) struct Wanted<'a> {
    /// `client_name`.
    pub name: &'a str,
    /// Where the user agent comes back (none for client credentials).
    pub redirect_uri: Option<&'a str>,
    /// The grants the client will use.
    pub grant_types: &'a [&'a str],
}

/// Registers the client at `server`'s registration endpoint (RFC 7591).
pub(crate) async fn register(
    http: &reqwest::Client,
    server: &ServerMetadata,
    wanted: &Wanted<'_>,
) -> Result<ClientRegistration, OAuthError> {
    let Some(endpoint) = server.registration_endpoint.as_deref() else {
        return Err(OAuthError::Registration(format!(
            "the authorization server {} takes no dynamic registration and no client id was \
             given: register the client there and pass its id (OAuthClient::client)",
            server.issuer
        )));
    };
    let method = AuthMethod::wanted(server.token_endpoint_auth_methods_supported.as_deref());
    let mut body = json!({
        "client_name": wanted.name,
        "grant_types": wanted.grant_types,
        "token_endpoint_auth_method": method.as_str(),
        "application_type": "native",
    });
    if let Some(uri) = wanted.redirect_uri {
        body["redirect_uris"] = json!([uri]);
        body["response_types"] = json!(["code"]);
    }
    let response = http
        .post(endpoint)
        .json(&body)
        .send()
        .await
        .map_err(|e| OAuthError::Registration(format!("cannot POST to {endpoint}: {e}")))?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(OAuthError::Registration(format!(
            "{endpoint} refused the registration ({status}): {text}"
        )));
    }
    #[derive(Deserialize)]
    struct Registered {
        client_id: String,
        client_secret: Option<String>,
        token_endpoint_auth_method: Option<String>,
    }
    let registered: Registered = serde_json::from_str(&text).map_err(|e| {
        OAuthError::Registration(format!("{endpoint} answered no registration ({e}): {text}"))
    })?;
    tracing::debug!(client_id = %registered.client_id, %endpoint, "client registered");
    let auth_method = match registered.token_endpoint_auth_method.as_deref() {
        Some(name) => AuthMethod::parse(name),
        None if registered.client_secret.is_none() => Some(AuthMethod::None),
        None => None,
    };
    Ok(ClientRegistration {
        client_id: registered.client_id,
        client_secret: registered.client_secret,
        auth_method,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_secret() {
        let shown = format!("{:?}", ClientRegistration::new("c1", Some("s3cret".into())));
        assert!(shown.contains("c1") && !shown.contains("s3cret"), "{shown}");
    }

    fn methods(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn the_auth_method_follows_the_registration_then_the_server() {
        let secret = ClientRegistration::new("c", Some("s".into()));
        let public = ClientRegistration::new("c", None);
        let basic = methods(&["client_secret_basic"]);
        let post = methods(&["client_secret_post"]);
        let none = methods(&["none"]);
        assert_eq!(
            AuthMethod::choose(&secret, None),
            AuthMethod::ClientSecretBasic
        );
        assert_eq!(
            AuthMethod::choose(&secret, Some(&basic)),
            AuthMethod::ClientSecretBasic
        );
        assert_eq!(
            AuthMethod::choose(&secret, Some(&post)),
            AuthMethod::ClientSecretPost
        );
        assert_eq!(AuthMethod::choose(&public, Some(&basic)), AuthMethod::None);
        let registered = ClientRegistration {
            auth_method: Some(AuthMethod::ClientSecretPost),
            ..secret
        };
        assert_eq!(
            AuthMethod::choose(&registered, Some(&none)),
            AuthMethod::ClientSecretPost
        );
    }

    #[test]
    fn a_registration_asks_for_no_secret_unless_the_server_wants_one() {
        assert_eq!(AuthMethod::wanted(None), AuthMethod::None);
        assert_eq!(
            AuthMethod::wanted(Some(&methods(&["client_secret_post", "none"]))),
            AuthMethod::None
        );
        assert_eq!(
            AuthMethod::wanted(Some(&methods(&[
                "client_secret_post",
                "client_secret_basic"
            ]))),
            AuthMethod::ClientSecretBasic
        );
        assert_eq!(
            AuthMethod::wanted(Some(&methods(&["client_secret_post"]))),
            AuthMethod::ClientSecretPost
        );
    }
}
