//! The issuer's signing keys (its JWKS), kept in memory: read when a token names a key not
//! known yet (a rotated key is picked up by the first token signed with it), at most once
//! per [`ResourceConfig::jwks_refetch_interval`](super::ResourceConfig), and in the
//! background once they are older than [`ResourceConfig::jwks_max_age`](super::ResourceConfig)
//! (a key the issuer withdrew stops verifying tokens), while tokens signed with known keys
//! are verified without waiting for any fetch.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use super::fetch::Fetcher;
use super::issuer;

/// One public key of the issuer's.
#[derive(Clone)]
pub(crate) struct Key {
    id: Option<String>,
    /// The algorithm the JWK names (`alg`), if it names one: only tokens signed with it use it.
    algorithm: Option<Algorithm>,
    pub decoding: DecodingKey,
}

/// The keys known now, and the one fetch of more at a time.
pub(crate) struct KeySet {
    fetcher: Fetcher,
    issuer: String,
    refetch_interval: Duration,
    max_age: Duration,
    keys: RwLock<Keys>,
    refresh: tokio::sync::Mutex<Refresh>,
}

/// The keys of the last JWKS read, and when it was read.
#[derive(Clone, Default)]
struct Keys {
    keys: Arc<Vec<Key>>,
    read_at: Option<Instant>,
}

/// When the keys were last asked for, whether that failed, and where they are.
#[derive(Default)]
struct Refresh {
    last: Option<Instant>,
    failed: bool,
    jwks_uri: Option<String>,
}

/// The shortest time between two reads when the last one failed (an issuer that was not up
/// yet when the server started): shorter than the refetch interval, as the keys may be
/// missing altogether.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(1);

impl KeySet {
    pub fn new(
        fetcher: Fetcher,
        issuer: String,
        refetch_interval: Duration,
        max_age: Duration,
    ) -> Self {
        KeySet {
            fetcher,
            issuer,
            refetch_interval,
            max_age,
            keys: RwLock::default(),
            refresh: tokio::sync::Mutex::new(Refresh::default()),
        }
    }

    /// The keys a token with key id `kid` signed with `algorithm` may be verified with;
    /// when none is known, the JWKS is read again first (unless it was read within the
    /// refetch interval). Keys older than the max age are read again in the background.
    pub async fn candidates(self: &Arc<Self>, kid: Option<&str>, algorithm: Algorithm) -> Vec<Key> {
        let known = self.known(kid, algorithm);
        if !known.is_empty() {
            self.refresh_if_old();
            return known;
        }
        self.refresh().await;
        self.known(kid, algorithm)
    }

    /// Starts reading the keys again, without waiting, when they are older than the max age
    /// and no read is under way.
    fn refresh_if_old(self: &Arc<Self>) {
        let read_at = self.keys.read().expect("not poisoned").read_at;
        if read_at.is_none_or(|at| at.elapsed() < self.max_age) || self.refresh.try_lock().is_err()
        {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let keys = self.clone();
            runtime.spawn(async move { keys.refresh().await });
        }
    }

    /// Reads the keys now, as when starting: a server that can reach its issuer verifies
    /// its first token without waiting.
    pub async fn prefetch(&self) {
        self.refresh().await;
    }

    fn known(&self, kid: Option<&str>, algorithm: Algorithm) -> Vec<Key> {
        let keys = self.keys.read().expect("not poisoned").keys.clone();
        keys.iter()
            .filter(|key| key.algorithm.is_none_or(|a| a == algorithm))
            .filter(|key| key.decoding.family() == algorithm.family())
            .filter(|key| kid.is_none() || key.id.as_deref() == kid)
            .cloned()
            .collect()
    }

    async fn refresh(&self) {
        let mut refresh = self.refresh.lock().await;
        let interval = match refresh.failed {
            true => self.refetch_interval.min(RETRY_AFTER_FAILURE),
            false => self.refetch_interval,
        };
        if refresh.last.is_some_and(|last| last.elapsed() < interval) {
            return;
        }
        refresh.last = Some(Instant::now());
        let fetched = self.fetch(&mut refresh).await;
        refresh.failed = fetched.is_err();
        match fetched {
            Ok(keys) => {
                tracing::info!(issuer = %self.issuer, keys = keys.len(), "read the issuer's signing keys");
                *self.keys.write().expect("not poisoned") = Keys {
                    keys: Arc::new(keys),
                    read_at: Some(Instant::now()),
                };
            }
            Err(why) => {
                tracing::warn!(issuer = %self.issuer, error = %why, "cannot read the issuer's signing keys; keeping those known");
            }
        }
    }

    async fn fetch(&self, refresh: &mut Refresh) -> Result<Vec<Key>, String> {
        if refresh.jwks_uri.is_none() {
            let metadata = issuer::discover(&self.fetcher, &self.issuer).await?;
            let uri = metadata.jwks_uri.ok_or_else(|| {
                format!("the issuer {}'s metadata names no jwks_uri", self.issuer)
            })?;
            refresh.jwks_uri = Some(uri);
        }
        let uri = refresh.jwks_uri.as_deref().expect("set above");
        let document = self.fetcher.get(uri).await?;
        let Some(entries) = document["keys"].as_array() else {
            return Err(format!("{uri} is no JWK set (no \"keys\" array)"));
        };
        Ok(entries.iter().filter_map(key).collect())
    }
}

/// The verification key of one JWK, if it is one: a public signing key of a kind supported
/// (JWKs for encryption, symmetric keys and kinds not known are passed over).
fn key(entry: &Value) -> Option<Key> {
    if entry["use"].as_str().is_some_and(|u| u != "sig") || entry["kty"] == "oct" {
        return None;
    }
    let jwk: Jwk = serde_json::from_value(entry.clone()).ok()?;
    let decoding = DecodingKey::from_jwk(&jwk).ok()?;
    let algorithm = match entry["alg"].as_str() {
        Some(name) => Some(name.parse().ok()?),
        None => None,
    };
    Some(Key {
        id: jwk.common.key_id,
        algorithm,
        decoding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_public_signing_keys_of_known_kinds_are_kept() {
        let ec = json!({"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256",
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"});
        let kept = key(&ec).expect("an EC signing key");
        assert_eq!(kept.id.as_deref(), Some("k1"));
        assert_eq!(kept.algorithm, Some(Algorithm::ES256));
        let mut encryption = ec.clone();
        encryption["use"] = json!("enc");
        assert!(key(&encryption).is_none());
        assert!(key(&json!({"kty": "oct", "k": "c2VjcmV0"})).is_none());
        assert!(key(&json!({"kty": "OKP", "crv": "X448", "x": "AA"})).is_none());
        assert!(key(&json!("garbage")).is_none());
    }
}
