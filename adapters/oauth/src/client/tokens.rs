//! What the client keeps between requests: each server's tokens (with what refreshing them
//! needs) and its registration at each authorization server. [`MemoryStore`] keeps them for
//! the life of the process; an application that wants them on disk implements [`TokenStore`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::registration::ClientRegistration;

/// How long before its expiry an access token is refreshed instead of sent, at most (a
/// quarter of its lifetime when that is shorter: a token valid ten seconds is sent for
/// seven and a half).
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

/// The tokens for one server, and where they came from (its `Debug` shows no token).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// The access token sent as `Authorization: Bearer`.
    pub access_token: String,
    /// The refresh token, when the authorization server gave one.
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch (unknown: never).
    #[serde(default)]
    pub expires_at: Option<u64>,
    /// When it was issued, in seconds since the Unix epoch (unknown: the margin before
    /// its expiry is the longest).
    #[serde(default)]
    pub issued_at: Option<u64>,
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

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &"…")
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "…"))
            .field("expires_at", &self.expires_at)
            .field("issued_at", &self.issued_at)
            .field("scopes", &self.scopes)
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("resource", &self.resource)
            .finish()
    }
}

impl Tokens {
    /// Whether the access token has expired, or will soon: within 30 seconds, or a quarter
    /// of its lifetime when that is shorter.
    pub fn expired(&self) -> bool {
        let Some(at) = self.expires_at else {
            return false;
        };
        let lifetime = self
            .issued_at
            .map(|issued| Duration::from_secs(at.saturating_sub(issued)));
        let margin = lifetime.map_or(EXPIRY_MARGIN, |l| EXPIRY_MARGIN.min(l / 4));
        now() + margin >= Duration::from_secs(at)
    }

    /// The issue and expiry times of a token issued now, valid for `lifetime`.
    pub(crate) fn times(lifetime: Option<Duration>) -> (Option<u64>, Option<u64>) {
        let now = now();
        (Some(now.as_secs()), lifetime.map(|l| (now + l).as_secs()))
    }
}

/// The time since the Unix epoch.
fn now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn valid_for(lifetime: u64, issued_ago: u64) -> Tokens {
        let issued = now().as_secs() - issued_ago;
        Tokens {
            access_token: "a".into(),
            refresh_token: None,
            expires_at: Some(issued + lifetime),
            issued_at: Some(issued),
            scopes: vec![],
            issuer: "https://as".into(),
            token_endpoint: "https://as/token".into(),
            resource: "https://mcp/mcp".into(),
        }
    }

    #[test]
    fn a_token_is_refreshed_a_quarter_of_its_life_before_it_expires_at_most_30_s() {
        assert!(!valid_for(3600, 0).expired());
        assert!(!valid_for(3600, 3560).expired());
        assert!(valid_for(3600, 3575).expired());
        // Short-lived tokens are still sent for most of their life.
        assert!(!valid_for(8, 0).expired());
        assert!(!valid_for(8, 5).expired());
        assert!(valid_for(8, 7).expired());
        // Without an issue time, 30 s.
        let unknown = Tokens {
            issued_at: None,
            ..valid_for(20, 0)
        };
        assert!(unknown.expired());
        assert!(!Tokens {
            expires_at: None,
            ..unknown
        }
        .expired());
    }
}
