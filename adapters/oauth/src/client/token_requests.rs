//! The token endpoint's requests, through the `oauth2` crate: the authorization URL (PKCE
//! S256, `state`, `scope`, `resource`), the code exchange, refresh and client credentials,
//! each with the client's authentication and the `resource` parameter (RFC 8707).

use std::time::Duration;

use oauth2::basic::{BasicClient, BasicTokenResponse};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet,
    EndpointSet, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError,
    Scope, TokenResponse, TokenUrl,
};
use url::Url;

use super::error::OAuthError;
use super::registration::{AuthMethod, ClientRegistration};

/// A client of one token endpoint, for one resource.
pub(crate) struct TokenEndpoint<'a> {
    /// The token endpoint's URL.
    pub url: &'a str,
    /// Who the client is there.
    pub registration: &'a ClientRegistration,
    /// How it authenticates.
    pub method: AuthMethod,
    /// The `resource` parameter, exactly as the resource's metadata names it.
    pub resource: &'a str,
}

/// What a token request gave.
pub(crate) struct Granted {
    pub access_token: String,
    pub refresh_token: Option<String>,
    pub expires_in: Option<Duration>,
}

/// An authorization URL and what its redirect is checked against.
pub(crate) struct Authorization {
    pub url: Url,
    pub state: String,
    pub verifier: PkceCodeVerifier,
}

type Client =
    BasicClient<EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

impl TokenEndpoint<'_> {
    /// The `oauth2` client: id, secret (unless the method is `none`), authentication, token URL.
    fn client(&self) -> Result<Client, OAuthError> {
        let token_url = TokenUrl::new(self.url.to_owned()).map_err(|e| {
            OAuthError::Token(format!("the token endpoint {:?} is no URL: {e}", self.url))
        })?;
        let mut client = BasicClient::new(ClientId::new(self.registration.client_id.clone()))
            .set_token_uri(token_url)
            .set_auth_type(match self.method {
                AuthMethod::ClientSecretPost => AuthType::RequestBody,
                _ => AuthType::BasicAuth,
            });
        // Without a secret, `oauth2` sends the client id in the body (`none`).
        if let (Some(secret), false) = (
            &self.registration.client_secret,
            self.method == AuthMethod::None,
        ) {
            client = client.set_client_secret(ClientSecret::new(secret.clone()));
        }
        Ok(client)
    }

    /// The authorization URL at `endpoint` for `scopes` (none: no `scope` parameter), coming
    /// back to `redirect_uri`.
    pub fn authorization(
        &self,
        endpoint: &str,
        redirect_uri: &str,
        scopes: &[String],
    ) -> Result<Authorization, OAuthError> {
        let auth_url = AuthUrl::new(endpoint.to_owned()).map_err(|e| {
            OAuthError::Authorization(format!(
                "the authorization endpoint {endpoint:?} is no URL: {e}"
            ))
        })?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let client = self
            .client()?
            .set_auth_uri(auth_url)
            .set_redirect_uri(redirect(redirect_uri)?);
        let (url, state) = client
            .authorize_url(CsrfToken::new_random)
            .add_scopes(scopes.iter().cloned().map(Scope::new))
            .set_pkce_challenge(challenge)
            .add_extra_param("resource", self.resource)
            .url();
        Ok(Authorization {
            url,
            state: state.secret().clone(),
            verifier,
        })
    }

    /// Exchanges an authorization code (with its PKCE verifier) for tokens.
    pub async fn code(
        &self,
        http: &reqwest::Client,
        code: String,
        verifier: PkceCodeVerifier,
        redirect_uri: &str,
    ) -> Result<Granted, OAuthError> {
        let client = self.client()?.set_redirect_uri(redirect(redirect_uri)?);
        let answer = client
            .exchange_code(AuthorizationCode::new(code))
            .set_pkce_verifier(verifier)
            .add_extra_param("resource", self.resource)
            .request_async(http)
            .await;
        self.granted(answer)
    }

    /// Trades a refresh token for a new access token.
    pub async fn refresh(
        &self,
        http: &reqwest::Client,
        refresh_token: &str,
    ) -> Result<Granted, OAuthError> {
        let client = self.client()?;
        let token = RefreshToken::new(refresh_token.to_owned());
        let answer = client
            .exchange_refresh_token(&token)
            .add_extra_param("resource", self.resource)
            .request_async(http)
            .await;
        self.granted(answer)
    }

    /// Gets a token with the client's own credentials (no user).
    pub async fn client_credentials(
        &self,
        http: &reqwest::Client,
        scopes: &[String],
    ) -> Result<Granted, OAuthError> {
        let client = self.client()?;
        let answer = client
            .exchange_client_credentials()
            .add_scopes(scopes.iter().cloned().map(Scope::new))
            .add_extra_param("resource", self.resource)
            .request_async(http)
            .await;
        self.granted(answer)
    }

    /// The tokens of an answer, or why there are none.
    fn granted<E: std::error::Error + 'static>(
        &self,
        answer: Result<BasicTokenResponse, RequestTokenError<E, oauth2::basic::BasicErrorResponse>>,
    ) -> Result<Granted, OAuthError> {
        let url = self.url;
        match answer {
            Ok(tokens) => Ok(Granted {
                access_token: tokens.access_token().secret().clone(),
                refresh_token: tokens.refresh_token().map(|t| t.secret().clone()),
                expires_in: tokens.expires_in(),
            }),
            Err(RequestTokenError::ServerResponse(refused)) => Err(OAuthError::Token(format!(
                "{url} refused ({}){}{}",
                refused.error(),
                refused
                    .error_description()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default(),
                match refused.error().as_ref() {
                    "invalid_client" => " (check the client id and secret)",
                    "invalid_grant" => " (sign in again)",
                    _ => "",
                }
            ))),
            Err(RequestTokenError::Request(e)) => {
                Err(OAuthError::Token(format!("cannot reach {url}: {e}")))
            }
            Err(RequestTokenError::Parse(e, body)) => Err(OAuthError::Token(format!(
                "{url} answered no token ({e}): {}",
                String::from_utf8_lossy(&body)
            ))),
            Err(RequestTokenError::Other(why)) => Err(OAuthError::Token(format!("{url}: {why}"))),
        }
    }
}

/// `uri` as a redirect URL.
fn redirect(uri: &str) -> Result<RedirectUrl, OAuthError> {
    RedirectUrl::new(uri.to_owned())
        .map_err(|e| OAuthError::Authorization(format!("the redirect URI {uri:?} is no URL: {e}")))
}
