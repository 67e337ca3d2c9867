//! Our `task-server --http` as an OAuth resource server of a real authorization server:
//! oidc-provider 9.13.3 (`tests/peers/auth_server.mjs`, an OpenID Certified provider, under
//! Node 22), issuing JWT access tokens for the resource a client names. Machine identities
//! (`machine`, `machine-2`) get tokens with the client-credentials grant: our client signs
//! in as `machine` by itself (`OAuthClient::client_credentials`) and runs a task; the other,
//! its token got by hand, cannot see it; a token for another audience, an expired one,
//! and (after the issuer rotates to a new key) tokens signed with the new key are judged as
//! the issuer's JWKS says.
//!
//! Test names: `oidc_provider_<case>`.

use std::time::Duration;

use serde_json::{json, Value};
use taskwire_demo::tools::RESULT_TEXT;
use taskwire_driver::engine::{ClientEra, Config, Era, TaskStatus};
use taskwire_driver::{Client, ClientBuilder};
use taskwire_http::oauth::client::OAuthClient;
use taskwire_http::HttpClient;
use taskwire_tests::peers::demo::binary;
use taskwire_tests::peers::http::{free_port, HttpServer};
use taskwire_tests::peers::{self, Argv, Peers};
use taskwire_tests::procs::updates;

use crate::common::DEADLINE;

/// An authorization server and our server behind it.
struct Deployment {
    issuer: HttpServer,
    issuer_port: u16,
    server: HttpServer,
}

impl Deployment {
    /// oidc-provider publishing `keys`, its access tokens valid `access_ttl` s, and
    /// `task-server --http` wanting its tokens (`server_args` added).
    fn start(p: &Peers, test: &str, keys: &str, access_ttl: u64, server_args: &[&str]) -> Self {
        let issuer_port = free_port();
        let issuer = start_issuer(p, test, issuer_port, keys, access_ttl);
        let issuer_url = format!("http://127.0.0.1:{issuer_port}");
        let log = p.scratch(&format!("{test}.task-server.log"));
        let server = HttpServer::start(
            |port| {
                Argv::new(binary("task-server"))
                    .args(&["--http", &format!("127.0.0.1:{port}"), "--step-ms", "100"])
                    .args(&["--auth-issuer", &issuer_url])
                    .args(&["--auth-audience", &format!("http://127.0.0.1:{port}/mcp")])
                    .args(server_args)
                    .env("RUST_LOG", "info,taskwire_oauth=debug")
            },
            Some(&log),
        );
        Deployment {
            issuer,
            issuer_port,
            server,
        }
    }

    /// A token of the machine client `client` for `resource` (our server when `None`).
    async fn token(&self, client: &str, resource: Option<&str>) -> String {
        let resource = resource.unwrap_or(&self.server.url);
        let response = reqwest::Client::new()
            .post(format!("http://127.0.0.1:{}/token", self.issuer_port))
            .basic_auth(client, Some(format!("{client}-secret")))
            .form(&[
                ("grant_type", "client_credentials"),
                ("resource", resource),
                ("scope", "mcp"),
            ])
            .send()
            .await
            .expect("the token endpoint answers");
        let body: Value = response.json().await.expect("JSON");
        body["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no access token: {body}\n{}", self.issuer.log()))
            .to_owned()
    }

    /// `tools/list` as 2026-07-28 with `token`: the HTTP status and challenge.
    async fn list_with(&self, token: &str) -> (u16, String) {
        let response = reqwest::Client::new()
            .post(&self.server.url)
            .bearer_auth(token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/list")
            .body(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {}}}})
                .to_string(),
            )
            .send()
            .await
            .expect("the server answers");
        let challenge = response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        (response.status().as_u16(), challenge)
    }

    fn logs(&self) -> String {
        format!("{}{}", self.issuer.log(), self.server.log())
    }
}

fn start_issuer(p: &Peers, test: &str, port: u16, keys: &str, ttl: u64) -> HttpServer {
    let log = p.scratch(&format!("{test}.auth-server.{keys}.log"));
    HttpServer::start_at(port, p.auth_server(port, keys, ttl), Some(&log))
}

/// Our client at `url` in `era`, initialized: signing in itself as `machine` (the
/// client-credentials grant) with `token` `None`, else sending `token`.
async fn client_with(url: &str, token: Option<&str>, era: Era) -> Client {
    let mut config = Config::new("oauth-interop", "1");
    config.client_era = ClientEra::Only(era);
    let http = match token {
        None => {
            HttpClient::new(url).oauth(OAuthClient::client_credentials("machine", "machine-secret"))
        }
        Some(token) => HttpClient::new(url)
            .header("authorization", &format!("Bearer {token}"))
            .expect("a header"),
    };
    let client = http.connect(ClientBuilder::new(config));
    client.initialize().await.expect("initialize");
    client
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

#[test]
fn oidc_provider_tokens_make_tasks_their_callers_only() {
    let Some(p) = peers::ready("oidc_provider_tokens_make_tasks_their_callers_only") else {
        return;
    };
    let deployment = Deployment::start(p, "oidc-owners", "key1", 300, &[]);
    runtime().block_on(async {
        let run = async {
            for era in [Era::V2026_07_28, Era::V2025_11_25] {
                let client = client_with(&deployment.server.url, None, era).await;
                let call = client
                    .call_tool_as_task("long_running_task", json!({}), Some(60_000))
                    .await
                    .expect("the task call");
                let task = call.task.clone().expect("a task").id.to_string();
                let seen = updates(&call).await;
                assert_eq!(
                    seen.last().map(String::as_str),
                    Some(format!("result: {RESULT_TEXT}").as_str()),
                    "{era:?}: {seen:?}"
                );
                let other = deployment.token("machine-2", None).await;
                let stranger = client_with(&deployment.server.url, Some(&other), era).await;
                let refused = stranger.get_task(&task).await.expect_err("not theirs");
                assert!(
                    refused.to_string().to_lowercase().contains("not found"),
                    "{era:?}: {refused}"
                );
                if era == Era::V2025_11_25 {
                    let listed = stranger.list_tasks().await.expect("a listing");
                    assert!(listed.iter().all(|t| t.id.to_string() != task));
                }
                let mine = client.get_task(&task).await.expect("still mine");
                assert_eq!(mine.status, TaskStatus::Completed);
                client.close().await;
                stranger.close().await;
            }
            // A token the issuer made for another resource is refused here.
            let elsewhere = deployment
                .token("machine", Some("http://127.0.0.1:1/mcp"))
                .await;
            let (status, challenge) = deployment.list_with(&elsewhere).await;
            assert_eq!(status, 401);
            assert!(challenge.contains("not for this resource"), "{challenge}");
        };
        if tokio::time::timeout(DEADLINE, run).await.is_err() {
            panic!("timed out{}", deployment.logs());
        }
    });
}

#[test]
fn oidc_provider_expired_tokens_are_refused_and_a_rotated_key_is_picked_up() {
    let test = "oidc_provider_expired_tokens_are_refused_and_a_rotated_key_is_picked_up";
    let Some(p) = peers::ready(test) else {
        return;
    };
    let mut deployment =
        Deployment::start(p, "oidc-rotation", "key1", 2, &["--auth-clock-skew", "0"]);
    runtime().block_on(async {
        let first = deployment.token("machine", None).await;
        assert_eq!(
            deployment.list_with(&first).await.0,
            200,
            "{}",
            deployment.logs()
        );
        // Whole seconds: `exp` is past once a second more has begun.
        tokio::time::sleep(Duration::from_millis(3_500)).await;
        let (status, challenge) = deployment.list_with(&first).await;
        assert_eq!(status, 401);
        assert!(challenge.contains("expired"), "{challenge}");
        // The issuer restarts signing with a new key (RS256, kid rsa-2), the old one still
        // published.
        deployment.issuer.kill();
        deployment.issuer =
            start_issuer(p, "oidc-rotation", deployment.issuer_port, "rsa,key1", 300);
        let rotated = deployment.token("machine", None).await;
        let header = rotated.split('.').next().expect("a JWT header");
        assert!(
            String::from_utf8(base64_url(header)).is_ok_and(|h| h.contains("rsa-2")),
            "the issuer signs with the new key"
        );
        // Picked up by the first token signed with it once the keys may be read again
        // (ResourceConfig::jwks_refetch_interval, 30 s after the last read).
        let mut status = 0;
        for _ in 0..40 {
            status = deployment.list_with(&rotated).await.0;
            if status == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        assert_eq!(status, 200, "{}", deployment.logs());
    });
    let log = std::fs::read_to_string(deployment.server.stderr.as_ref().expect("a log"))
        .unwrap_or_default();
    assert_eq!(
        log.matches("read the issuer's signing keys").count(),
        2,
        "read at start, then again for the new key{}",
        deployment.logs()
    );
}

fn base64_url(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .expect("base64url")
}

#[test]
fn oidc_provider_task_client_signs_in_as_a_machine_and_runs_the_seed_flow() {
    let test = "oidc_provider_task_client_signs_in_as_a_machine_and_runs_the_seed_flow";
    let Some(p) = peers::ready(test) else {
        return;
    };
    let deployment = Deployment::start(p, "oidc-task-client", "key1", 300, &[]);
    let client = |secret: Option<&str>| {
        let mut argv = Argv::new(binary("task-client"))
            .args(&["--url", &deployment.server.url])
            .args(&["--client-credentials", "machine"]);
        if let Some(secret) = secret {
            argv = argv.env("TASKWIRE_CLIENT_SECRET", secret);
        }
        peers::run(&argv, DEADLINE)
    };
    let refused = client(None);
    assert_eq!(refused.code, Some(2), "{refused}");
    assert!(
        refused.stderr.contains("TASKWIRE_CLIENT_SECRET"),
        "{refused}"
    );
    let ran = client(Some("machine-secret"));
    assert_eq!(ran.code, Some(0), "{ran}{}", deployment.logs());
    assert!(
        ran.stdout.contains(&format!("result: {RESULT_TEXT}")),
        "{ran}"
    );
    let wrong = client(Some("not-the-secret"));
    assert_ne!(wrong.code, Some(0), "{wrong}");
    assert!(
        wrong.stderr.contains("check the client id and secret"),
        "{wrong}"
    );
}
