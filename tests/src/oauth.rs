//! An authorization server of our own for the resource-server tests: its metadata (RFC
//! 8414), a JWKS the test can rotate, make hang or turn to garbage, an introspection
//! endpoint (RFC 7662) answering what the test says, and access tokens signed with the
//! keys in `tests/fixtures/oauth/` (or forged).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

/// A signing key of the fixtures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestKey {
    /// P-256 (ES256), kid `key1`: published from the start.
    Key1,
    /// RSA 2048 (RS256), kid `rsa-2`: the key the issuer rotates to.
    Rsa,
    /// P-256 (ES256) that signs as `key1` but is not it: forged tokens.
    Forger,
}

impl TestKey {
    fn pem(self) -> &'static [u8] {
        match self {
            TestKey::Key1 => include_bytes!("../fixtures/oauth/key1.pem"),
            TestKey::Rsa => include_bytes!("../fixtures/oauth/rsa.pem"),
            TestKey::Forger => include_bytes!("../fixtures/oauth/forger.pem"),
        }
    }

    fn algorithm(self) -> Algorithm {
        match self {
            TestKey::Rsa => Algorithm::RS256,
            _ => Algorithm::ES256,
        }
    }

    /// The key id its tokens name.
    pub fn kid(self) -> &'static str {
        match self {
            TestKey::Key1 | TestKey::Forger => "key1",
            TestKey::Rsa => "rsa-2",
        }
    }

    fn encoding(self) -> EncodingKey {
        match self.algorithm() {
            Algorithm::RS256 => EncodingKey::from_rsa_pem(self.pem()),
            _ => EncodingKey::from_ec_pem(self.pem()),
        }
        .expect("a fixture key")
    }

    /// Its public JWK, as a JWKS lists it.
    pub fn jwk(self) -> Value {
        let jwk = Jwk::from_encoding_key(&self.encoding(), self.algorithm()).expect("a JWK");
        let mut jwk = serde_json::to_value(jwk).expect("JSON");
        jwk["kid"] = json!(self.kid());
        jwk["use"] = json!("sig");
        jwk
    }
}

/// What the JWKS endpoint does.
#[derive(Clone, Debug)]
pub enum Jwks {
    /// Lists these keys.
    Keys(Vec<TestKey>),
    /// Never answers.
    Hang,
    /// Answers with something that is no JWK set.
    Garbage,
}

#[derive(Debug)]
struct IssuerState {
    jwks: Jwks,
    /// Introspection answers by token; others are inactive.
    opaque: HashMap<String, Value>,
}

/// The server, on a thread of its own; it stops when dropped.
pub struct MockIssuer {
    /// Its issuer identifier (`http://127.0.0.1:PORT`).
    pub url: String,
    state: Arc<Mutex<IssuerState>>,
    jwks_fetches: Arc<AtomicUsize>,
    introspections: Arc<AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

#[derive(Clone)]
struct Shared {
    issuer: String,
    state: Arc<Mutex<IssuerState>>,
    jwks_fetches: Arc<AtomicUsize>,
    introspections: Arc<AtomicUsize>,
}

impl MockIssuer {
    /// An issuer on a free local port whose JWKS lists [`TestKey::Key1`], its metadata at
    /// RFC 8414's well-known path.
    pub fn start() -> MockIssuer {
        MockIssuer::serving_metadata_at("/.well-known/oauth-authorization-server")
    }

    /// As [`MockIssuer::start`], its metadata at OpenID Connect Discovery's path only.
    pub fn openid_only() -> MockIssuer {
        MockIssuer::serving_metadata_at("/.well-known/openid-configuration")
    }

    fn serving_metadata_at(metadata_path: &str) -> MockIssuer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        listener.set_nonblocking(true).expect("non-blocking");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let state = Arc::new(Mutex::new(IssuerState {
            jwks: Jwks::Keys(vec![TestKey::Key1]),
            opaque: HashMap::new(),
        }));
        let shared = Shared {
            issuer: url.clone(),
            state: state.clone(),
            jwks_fetches: Arc::default(),
            introspections: Arc::default(),
        };
        let (jwks_fetches, introspections) =
            (shared.jwks_fetches.clone(), shared.introspections.clone());
        let app = Router::new()
            .route(metadata_path, get(metadata))
            .route("/jwks", get(jwks))
            .route("/introspect", post(introspect))
            .with_state(shared);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        crate::peers::http::serve_in_background(listener, app, async {
            let _ = stopped.await;
        });
        MockIssuer {
            url,
            state,
            jwks_fetches,
            introspections,
            stop: Some(stop),
        }
    }

    /// What the JWKS endpoint does from now on.
    pub fn set_jwks(&self, jwks: Jwks) {
        self.state.lock().expect("not poisoned").jwks = jwks;
    }

    /// The introspection endpoint answers `answer` (with `active: true`) for `token`.
    pub fn opaque(&self, token: &str, answer: Value) {
        let mut answer = answer;
        answer["active"] = json!(true);
        let mut state = self.state.lock().expect("not poisoned");
        state.opaque.insert(token.to_owned(), answer);
    }

    /// How many times the JWKS was asked for.
    pub fn jwks_fetches(&self) -> usize {
        self.jwks_fetches.load(Ordering::SeqCst)
    }

    /// How many introspections were asked for.
    pub fn introspections(&self) -> usize {
        self.introspections.load(Ordering::SeqCst)
    }

    /// An access token's claims: from this issuer, for `audience`, of `subject` via
    /// `client`, granting `scope`, valid for five minutes.
    pub fn claims(&self, subject: &str, client: &str, audience: &str, scope: &str) -> Value {
        let now = now();
        json!({"iss": self.url, "sub": subject, "client_id": client, "aud": audience,
            "scope": scope, "iat": now, "exp": now + 300})
    }

    /// `claims` signed with `key` (its kid in the header).
    pub fn token(&self, key: TestKey, claims: &Value) -> String {
        let mut header = Header::new(key.algorithm());
        header.kid = Some(key.kid().to_owned());
        header.typ = Some("at+jwt".to_owned());
        encode(&header, claims, &key.encoding()).expect("a signed token")
    }
}

impl Drop for MockIssuer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

async fn metadata(State(shared): State<Shared>) -> Json<Value> {
    let issuer = &shared.issuer;
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "introspection_endpoint": format!("{issuer}/introspect"),
        "response_types_supported": ["code"],
    }))
}

async fn jwks(State(shared): State<Shared>) -> axum::response::Response {
    use axum::response::IntoResponse;
    shared.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    let jwks = shared.state.lock().expect("not poisoned").jwks.clone();
    match jwks {
        Jwks::Keys(keys) => {
            Json(json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()})).into_response()
        }
        Jwks::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            ().into_response()
        }
        Jwks::Garbage => "<html>oops</html>".into_response(),
    }
}

async fn introspect(
    State(shared): State<Shared>,
    Form(form): Form<HashMap<String, String>>,
) -> Json<Value> {
    shared.introspections.fetch_add(1, Ordering::SeqCst);
    let token = form.get("token").cloned().unwrap_or_default();
    let state = shared.state.lock().expect("not poisoned");
    Json(
        state
            .opaque
            .get(&token)
            .cloned()
            .unwrap_or_else(|| json!({"active": false})),
    )
}
