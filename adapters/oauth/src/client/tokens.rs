//! What the client keeps between requests: each server's tokens (with what refreshing them
//! needs) and its registration at each authorization server. [`MemoryStore`] keeps them for
//! the life of the process; an application that wants them on disk implements [`TokenStore`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::registration::ClientRegistration;

/// How long before its expiry an access token is refreshed instead of sent.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

/// The tokens for one server, and where they came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The access token sent as `Authorization: Bearer`.
    pub access_token: String,
    /// The refresh token, when the authorization server gave one.
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch (unknown: never).
    #[serde(default)]
    pub expires_at: Option<u64>,
    /// The scopes asked for.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The authorization server that issued them.
    pub issuer: String,
    /// Its token endpoint, for refreshing.
    pub token_endpoint: String,
    /// The `resource` they are for.
    pub resource: String,
}

impl Tokens {
    /// Whether the access token has expired, or will within 30 seconds.
    pub fn expired(&self) -> bool {
        let Some(at) = self.expires_at else {
            return false;
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        now + EXPIRY_MARGIN >= Duration::from_secs(at)
    }

    /// The expiry of a token valid for `lifetime` from now.
    pub(crate) fn expiry(lifetime: Option<Duration>) -> Option<u64> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
        lifetime.map(|lifetime| (now + lifetime).as_secs())
    }
}

/// Where the client keeps tokens (by server URL) and registrations (by issuer). Called
/// while signing in and before each request: keep it quick.
pub trait TokenStore: Send + Sync + 'static {
    /// The tokens for the server at `server`.
    fn tokens(&self, server: &str) -> Option<Tokens>;
    /// Keeps (or with `None` forgets) the tokens for `server`.
    fn set_tokens(&self, server: &str, tokens: Option<Tokens>);
    /// The client's registration at the authorization server `issuer`.
    fn registration(&self, issuer: &str) -> Option<ClientRegistration>;
    /// Keeps the client's registration at `issuer`.
    fn set_registration(&self, issuer: &str, registration: ClientRegistration);
}

/// A [`TokenStore`] in memory: nothing outlives the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    tokens: Mutex<HashMap<String, Tokens>>,
    registrations: Mutex<HashMap<String, ClientRegistration>>,
}

impl TokenStore for MemoryStore {
    fn tokens(&self, server: &str) -> Option<Tokens> {
        self.tokens
            .lock()
            .expect("not poisoned")
            .get(server)
            .cloned()
    }

    fn set_tokens(&self, server: &str, tokens: Option<Tokens>) {
        let mut all = self.tokens.lock().expect("not poisoned");
        match tokens {
            Some(tokens) => all.insert(server.to_owned(), tokens),
            None => all.remove(server),
        };
    }

    fn registration(&self, issuer: &str) -> Option<ClientRegistration> {
        let all = self.registrations.lock().expect("not poisoned");
        all.get(issuer).cloned()
    }

    fn set_registration(&self, issuer: &str, registration: ClientRegistration) {
        let mut all = self.registrations.lock().expect("not poisoned");
        all.insert(issuer.to_owned(), registration);
    }
}
