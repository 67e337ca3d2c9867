//! [`OAuthClient`]: what a transport asks for the token to send, and tells when a server
//! refused one. It signs in once for all the requests that wait on it, refreshes expired
//! tokens, and keeps what it got in its [`TokenStore`].

use std::fmt;
use std::sync::Arc;

use super::challenge::Challenge;
use super::error::OAuthError;
use super::registration::ClientRegistration;
use super::scopes;
use super::tokens::{MemoryStore, TokenStore, Tokens};
use super::user_agent::UserAgent;

/// Re-authorizations for more scopes (`403 insufficient_scope`) one request may cause by
/// default.
const STEP_UPS: u32 = 2;
/// The `client_name` a dynamic registration gives by default.
const NAME: &str = "taskwire";

/// How the client gets its tokens.
#[derive(Clone)]
pub(crate) enum Grant {
    /// The authorization code flow, through a user agent.
    Code(Arc<dyn UserAgent>),
    /// The client's own credentials (a machine client, no user).
    ClientCredentials(ClientRegistration),
}

/// The client side of MCP authorization (2025-11-25): discovery, registration, the
/// authorization code flow with PKCE, refresh, step-up, client credentials.
///
/// A transport asks [`OAuthClient::access_token`] before each request and, when a server
/// answers `401` or `403` with a Bearer challenge, calls [`OAuthClient::challenged`] and
/// retries with the token it returns. Clones share their tokens and their sign-ins.
///
/// ```no_run
/// use taskwire_oauth::client::{Loopback, OAuthClient};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// // A person signs in with the browser; the redirect comes back to 127.0.0.1.
/// let agent = Loopback::bind(|url| {
///     eprintln!("sign in at {url}");
///     Ok(())
/// })?;
/// let oauth = OAuthClient::new(agent).name("my-app");
/// let server = "https://mcp.example.com/mcp";
/// // What a transport does when the server says 401 to a request without a token:
/// let challenge = taskwire_oauth::client::Challenge::default();
/// let token = oauth.challenged(server, None, &challenge).await?;
/// println!("Authorization: Bearer {token}");
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct OAuthClient {
    pub(crate) grant: Grant,
    /// The registration given by the user, used at any authorization server.
    pub(crate) client: Option<ClientRegistration>,
    /// The URL of the client's metadata document, used as its id where the server takes one.
    pub(crate) metadata_document: Option<String>,
    pub(crate) name: String,
    pub(crate) step_ups: u32,
    pub(crate) store: Arc<dyn TokenStore>,
    pub(crate) http: reqwest::Client,
    /// Held while signing in or refreshing: one at a time, the others then use its tokens.
    flight: Arc<tokio::sync::Mutex<()>>,
}

impl fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let grant = match self.grant {
            Grant::Code(_) => "authorization_code",
            Grant::ClientCredentials(_) => "client_credentials",
        };
        f.debug_struct("OAuthClient")
            .field("grant", &grant)
            .field("client_id", &self.client.as_ref().map(|c| &c.client_id))
            .field("metadata_document", &self.metadata_document)
            .field("name", &self.name)
            .field("step_ups", &self.step_ups)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A client that signs users in through `user_agent` (the authorization code flow). It
    /// registers itself dynamically unless given a client ([`OAuthClient::client`]) or a
    /// metadata document ([`OAuthClient::metadata_document`]).
    pub fn new(user_agent: impl UserAgent) -> Self {
        OAuthClient::with_grant(Grant::Code(Arc::new(user_agent)))
    }

    /// A machine client: tokens from its own credentials (the client credentials grant,
    /// `client_secret_basic` or `client_secret_post` as the server takes).
    pub fn client_credentials(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        let registration = ClientRegistration::new(client_id, Some(client_secret.into()));
        OAuthClient::with_grant(Grant::ClientCredentials(registration))
    }

    fn with_grant(grant: Grant) -> Self {
        OAuthClient {
            grant,
            client: None,
            metadata_document: None,
            name: NAME.to_owned(),
            step_ups: STEP_UPS,
            store: Arc::new(MemoryStore::default()),
            http: super::http::client(),
            flight: Arc::default(),
        }
    }

    /// Uses a client registered beforehand (its id and, for a confidential client, its
    /// secret) instead of registering.
    pub fn client(mut self, client_id: impl Into<String>, client_secret: Option<String>) -> Self {
        self.client = Some(ClientRegistration::new(client_id, client_secret));
        self
    }

    /// The HTTPS URL of the client's metadata document: its `client_id` at authorization
    /// servers that take one (`client_id_metadata_document_supported`).
    pub fn metadata_document(mut self, url: impl Into<String>) -> Self {
        self.metadata_document = Some(url.into());
        self
    }

    /// The `client_name` of a dynamic registration (default `taskwire`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// How many times one request may re-authorize for more scopes after `403
    /// insufficient_scope` (default 2); then its `403` stands.
    pub fn step_ups(mut self, step_ups: u32) -> Self {
        self.step_ups = step_ups;
        self
    }

    /// Where tokens and registrations are kept (default: in memory).
    pub fn store(mut self, store: impl TokenStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// The most step-ups one request may cause.
    pub fn max_step_ups(&self) -> u32 {
        self.step_ups
    }

    /// The access token to send to `server` (its MCP endpoint's URL), refreshed first when it
    /// has expired; `None` before signing in, or when it expired and could not be refreshed
    /// (the server's `401` then starts a sign-in).
    pub async fn access_token(&self, server: &str) -> Option<String> {
        let tokens = self.store.tokens(server)?;
        if !tokens.expired() {
            return Some(tokens.access_token);
        }
        let _one = self.flight.lock().await;
        let tokens = self.store.tokens(server)?;
        if !tokens.expired() {
            return Some(tokens.access_token);
        }
        match self.refresh(&tokens).await {
            Ok(fresh) => {
                let token = fresh.access_token.clone();
                self.store.set_tokens(server, Some(fresh));
                Some(token)
            }
            Err(e) => {
                tracing::debug!(server, error = %e, "the access token expired and was not refreshed");
                self.store.set_tokens(server, None);
                None
            }
        }
    }

    /// What to send after `server` refused a request (`401`, or `403` with
    /// `insufficient_scope`) with `challenge`; `rejected`: the token the request carried.
    /// A `401` refreshes the tokens when it can; otherwise, and for a `403`, signs in (once:
    /// requests refused together wait for the same sign-in), for a `403` with the scopes
    /// asked before and the challenge's. Bound the retries of one request with
    /// [`OAuthClient::max_step_ups`].
    pub async fn challenged(
        &self,
        server: &str,
        rejected: Option<&str>,
        challenge: &Challenge,
    ) -> Result<String, OAuthError> {
        let _one = self.flight.lock().await;
        let current = self.store.tokens(server);
        if let Some(tokens) = &current {
            if rejected != Some(tokens.access_token.as_str()) {
                // Another request signed in meanwhile.
                return Ok(tokens.access_token.clone());
            }
        }
        // A token refused as invalid (expired by the server's clock, revoked) is refreshed
        // first: no sign-in when the refresh token still works.
        if let Some(tokens) = current.as_ref().filter(|_| !challenge.insufficient_scope()) {
            match self.refresh(tokens).await {
                Ok(fresh) => {
                    tracing::info!(server, "the access token was refused; refreshed it");
                    let token = fresh.access_token.clone();
                    self.store.set_tokens(server, Some(fresh));
                    return Ok(token);
                }
                Err(e) => tracing::debug!(server, error = %e, "no refresh; signing in"),
            }
        }
        let wanted = match (&current, challenge.insufficient_scope()) {
            (Some(tokens), true) => scopes::union(&tokens.scopes, &challenge.scopes()),
            _ => challenge.scopes(),
        };
        tracing::info!(server, scopes = ?wanted, "signing in");
        let tokens = self.sign_in(server, challenge, &wanted).await?;
        let token = tokens.access_token.clone();
        self.store.set_tokens(server, Some(tokens));
        Ok(token)
    }

    /// `tokens` refreshed with their refresh token.
    async fn refresh(&self, tokens: &Tokens) -> Result<Tokens, OAuthError> {
        let Some(refresh_token) = tokens.refresh_token.as_deref() else {
            return Err(OAuthError::Token("no refresh token".to_owned()));
        };
        let registration = self.registration_at(&tokens.issuer).ok_or_else(|| {
            OAuthError::Registration(format!("no registration at {}", tokens.issuer))
        })?;
        let endpoint = super::token_requests::TokenEndpoint {
            url: &tokens.token_endpoint,
            registration: &registration,
            method: super::registration::AuthMethod::choose(&registration, None),
            resource: &tokens.resource,
        };
        let granted = endpoint.refresh(&self.http, refresh_token).await?;
        let (issued_at, expires_at) = Tokens::times(granted.expires_in);
        Ok(Tokens {
            access_token: granted.access_token,
            refresh_token: granted
                .refresh_token
                .or_else(|| tokens.refresh_token.clone()),
            issued_at,
            expires_at,
            ..tokens.clone()
        })
    }

    /// The registration the client has at `issuer`, without registering.
    pub(crate) fn registration_at(&self, issuer: &str) -> Option<ClientRegistration> {
        match &self.grant {
            Grant::ClientCredentials(registration) => Some(registration.clone()),
            Grant::Code(_) => self
                .store
                .registration(issuer)
                .or_else(|| self.client.clone()),
        }
    }
}
