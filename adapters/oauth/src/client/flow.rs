//! One sign-in, step by step: discover the server's authorization server, pick the scopes,
//! get a registration, then either the authorization code flow (the user agent's round trip,
//! its redirect checked: `state`, `iss`, an error) or the client credentials grant.

use url::Url;

use super::challenge::Challenge;
use super::discovery::{discover, Discovered};
use super::error::OAuthError;
use super::oauth_client::{Grant, OAuthClient};
use super::registration::{register, AuthMethod, ClientRegistration, Wanted};
use super::scopes;
use super::token_requests::{Granted, TokenEndpoint};
use super::tokens::Tokens;
use super::user_agent::{AuthorizationResponse, UserAgent};

impl OAuthClient {
    /// Signs in to `server` for `challenged` scopes (none: the resource's defaults).
    pub(crate) async fn sign_in(
        &self,
        server: &str,
        challenge: &Challenge,
        challenged: &[String],
    ) -> Result<Tokens, OAuthError> {
        let url = Url::parse(server).map_err(|e| {
            OAuthError::Discovery(format!("the server URL {server:?} is not valid: {e}"))
        })?;
        let found = discover(&self.http, &url, challenge).await?;
        // `offline_access` (a refresh token) is for people: client credentials get none.
        let server_scopes = match &self.grant {
            Grant::Code(_) => found.server.scopes_supported.as_deref(),
            Grant::ClientCredentials(_) => None,
        };
        let scopes = scopes::select(
            challenged,
            found
                .resource_metadata
                .as_ref()
                .and_then(|m| m.scopes_supported.as_deref()),
            server_scopes,
        );
        let granted = match &self.grant {
            Grant::ClientCredentials(registration) => {
                let endpoint = self.endpoint(&found, registration);
                endpoint.client_credentials(&self.http, &scopes).await?
            }
            Grant::Code(agent) => self.code_flow(&found, agent.as_ref(), &scopes).await?,
        };
        let (issued_at, expires_at) = Tokens::times(granted.expires_in);
        Ok(Tokens {
            access_token: granted.access_token,
            refresh_token: granted.refresh_token,
            issued_at,
            expires_at,
            scopes,
            issuer: found.server.issuer.clone(),
            token_endpoint: found.server.token_endpoint.clone(),
            resource: found.resource.clone(),
        })
    }

    /// The token endpoint of what was found, for `registration`.
    fn endpoint<'a>(
        &self,
        found: &'a Discovered,
        registration: &'a ClientRegistration,
    ) -> TokenEndpoint<'a> {
        let supported = found
            .server
            .token_endpoint_auth_methods_supported
            .as_deref();
        TokenEndpoint {
            url: &found.server.token_endpoint,
            registration,
            method: AuthMethod::choose(registration, supported),
            resource: &found.resource,
        }
    }

    /// The authorization code flow with PKCE through `agent`.
    async fn code_flow(
        &self,
        found: &Discovered,
        agent: &dyn UserAgent,
        scopes: &[String],
    ) -> Result<Granted, OAuthError> {
        let metadata = &found.server;
        let pkce = metadata.code_challenge_methods_supported.as_deref();
        if !pkce.is_some_and(|methods| methods.iter().any(|m| m == "S256")) {
            return Err(OAuthError::Authorization(format!(
                "the authorization server {} does not say it takes PKCE S256 \
                 (code_challenge_methods_supported): an MCP client does not sign in without it",
                metadata.issuer
            )));
        }
        let Some(authorize) = metadata.authorization_endpoint.as_deref() else {
            return Err(OAuthError::Discovery(format!(
                "the authorization server {} has no authorization_endpoint",
                metadata.issuer
            )));
        };
        let redirect_uri = agent.redirect_uri();
        let registration = self.registration(found, &redirect_uri).await?;
        let endpoint = self.endpoint(found, &registration);
        let request = endpoint.authorization(authorize, &redirect_uri, scopes)?;
        tracing::debug!(url = %request.url, "authorizing");
        let response = agent.authorize(&request.url).await?;
        let code = checked(response, &request.state, metadata)?;
        endpoint
            .code(&self.http, code, request.verifier, &redirect_uri)
            .await
    }

    /// The client's registration at the server found: the one given, the one kept, its
    /// metadata document, or a new one. Kept for refreshing, with how it authenticates.
    async fn registration(
        &self,
        found: &Discovered,
        redirect_uri: &str,
    ) -> Result<ClientRegistration, OAuthError> {
        let issuer = &found.server.issuer;
        let kept = self
            .client
            .clone()
            .or_else(|| self.store.registration(issuer));
        let registration = match (kept, &self.metadata_document) {
            (Some(kept), _) => kept,
            (None, Some(url)) if found.server.client_id_metadata_document_supported => {
                ClientRegistration {
                    client_id: url.clone(),
                    client_secret: None,
                    auth_method: Some(AuthMethod::None),
                }
            }
            (None, _) => {
                let wanted = Wanted {
                    name: &self.name,
                    redirect_uri: Some(redirect_uri),
                    grant_types: &["authorization_code", "refresh_token"],
                };
                register(&self.http, &found.server, &wanted).await?
            }
        };
        let supported = found
            .server
            .token_endpoint_auth_methods_supported
            .as_deref();
        let kept = ClientRegistration {
            auth_method: Some(AuthMethod::choose(&registration, supported)),
            ..registration
        };
        self.store.set_registration(issuer, kept.clone());
        Ok(kept)
    }
}

/// The code of an authorization response, once it is the answer to this request (`state`)
/// from this server (`iss`, RFC 9207: compared as strings, and required when the server
/// says it sends one).
fn checked(
    response: AuthorizationResponse,
    state: &str,
    server: &super::metadata::ServerMetadata,
) -> Result<String, OAuthError> {
    if let Some(error) = response.error {
        let said = response.error_description.unwrap_or_default();
        return Err(OAuthError::Authorization(format!(
            "the authorization server said {error}{}{said}",
            if said.is_empty() { "" } else { ": " }
        )));
    }
    if response.state.as_deref() != Some(state) {
        return Err(OAuthError::Authorization(
            "the redirect's state is not the request's: it is not the answer to this sign-in"
                .to_owned(),
        ));
    }
    match response.iss.as_deref() {
        Some(iss) if iss != server.issuer => {
            return Err(OAuthError::Mismatch(format!(
                "the redirect came from the issuer {iss:?}, not {:?}: its code is not used",
                server.issuer
            )));
        }
        None if server.authorization_response_iss_parameter_supported => {
            return Err(OAuthError::Mismatch(format!(
                "{} says its redirects name their issuer, and this one does not: its code is \
                 not used",
                server.issuer
            )));
        }
        _ => {}
    }
    response.code.ok_or_else(|| {
        OAuthError::Authorization("the redirect carries no authorization code".to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::metadata::ServerMetadata;

    fn response(state: &str, iss: Option<&str>) -> AuthorizationResponse {
        AuthorizationResponse {
            code: Some("c".into()),
            state: Some(state.into()),
            iss: iss.map(str::to_owned),
            ..AuthorizationResponse::default()
        }
    }

    #[test]
    fn a_redirect_is_checked_for_state_and_issuer() {
        let mut server = ServerMetadata {
            issuer: "http://localhost:9".into(),
            ..ServerMetadata::default()
        };
        assert_eq!(checked(response("s", None), "s", &server).unwrap(), "c");
        assert!(checked(response("x", None), "s", &server).is_err());
        let same = Some("http://localhost:9");
        assert!(checked(response("s", same), "s", &server).is_ok());
        // Compared as strings: a trailing slash is another issuer.
        let slash = Some("http://localhost:9/");
        assert!(matches!(
            checked(response("s", slash), "s", &server),
            Err(OAuthError::Mismatch(_))
        ));
        server.authorization_response_iss_parameter_supported = true;
        assert!(checked(response("s", None), "s", &server).is_err());
        let denied = AuthorizationResponse {
            error: Some("access_denied".into()),
            ..response("s", None)
        };
        let why = checked(denied, "s", &server).unwrap_err().to_string();
        assert!(why.contains("access_denied"), "{why}");
    }
}
