//! Signing in with OAuth as a person does it: `taskwire --url` against our `task-server`
//! behind a real authorization server (oidc-provider 9.13.3, `tests/peers/auth_server.mjs`),
//! the browser being headless Chromium that signs in on the server's pages
//! (`browser_login.mjs` as `$BROWSER`). The tokens are kept in a file only the user reads
//! and never printed; the next command needs no sign-in; another user cannot see the task;
//! an expired token is refreshed (before it is sent, and after the server refused it);
//! `taskwire logout URL` forgets them.

use std::time::Duration;

use serde_json::Value;
use taskwire_tests::peers::http::{free_port, HttpServer};
use taskwire_tests::peers::{self, run, Argv, Peers, Run};
use taskwire_tests::procs;

const LIMIT: Duration = Duration::from_secs(90);
/// The authorization server's access tokens live this long (refresh tokens an hour).
const ACCESS_TTL: u64 = 8;

/// `taskwire ARGS` as `login` (their browser signs in as them), their tokens in `tokens`.
fn taskwire_as(p: &Peers, login: &str, tokens: &std::path::Path, args: &[&str]) -> Run {
    let argv = Argv::new(procs::taskwire())
        .args(args)
        .env("BROWSER", p.browser_signing_in_as(login))
        .env("TASKWIRE_PEERS_NODE", &p.node_dir)
        .env("TASKWIRE_TOKENS", tokens)
        .env("RUST_LOG", "taskwire_oauth=debug");
    run(&argv, LIMIT)
}

fn signed_in(run: &Run) -> bool {
    run.stderr.contains("taskwire: sign in at ")
}

fn kept(tokens: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(tokens).expect("the token file")).expect("JSON")
}

/// The authorization server, and our `task-server` wanting its tokens (scope `mcp`).
fn deployment(p: &Peers, test: &str) -> (HttpServer, HttpServer) {
    let issuer_port = free_port();
    let log = p.scratch(&format!("{test}.auth-server.log"));
    let issuer = HttpServer::start_at(
        issuer_port,
        p.auth_server(issuer_port, "key1", ACCESS_TTL),
        Some(&log),
    );
    let server = HttpServer::start(
        |port| {
            Argv::new(procs::task_server()).args(&[
                "--http",
                &format!("127.0.0.1:{port}"),
                "--step-ms",
                "200",
                "--auth-issuer",
                &format!("http://127.0.0.1:{issuer_port}"),
                "--auth-audience",
                &format!("http://127.0.0.1:{port}/mcp"),
                "--auth-clock-skew",
                "0",
                "--auth-scopes",
                "mcp",
            ])
        },
        Some(&p.scratch(&format!("{test}.task-server.log"))),
    );
    (issuer, server)
}

#[test]
fn a_person_signs_in_once_and_their_task_is_theirs_only() {
    let Some(p) = peers::ready("a_person_signs_in_once_and_their_task_is_theirs_only") else {
        return;
    };
    let (_issuer, server) = deployment(p, "cli-sign-in");
    let url = server.url.as_str();
    let alice = p.scratch("cli-sign-in.alice.json");
    let bob = p.scratch("cli-sign-in.bob.json");
    for file in [&alice, &bob] {
        let _ = std::fs::remove_file(file);
    }

    // Alice's first command signs in, in the browser.
    let made = taskwire_as(
        p,
        "alice",
        &alice,
        &["call", "long_running_task", "--detach", "--url", url],
    );
    assert_eq!(made.code, Some(0), "{made}{}", server.log());
    assert!(signed_in(&made), "{made}");
    let id = made.stdout.lines().last().unwrap_or_default().to_owned();
    let file = kept(&alice);
    let token = file["tokens"][url]["access_token"]
        .as_str()
        .expect("a token")
        .to_owned();
    assert!(
        !made.stdout.contains(&token) && !made.stderr.contains(&token),
        "never printed"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&alice)
            .expect("the file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "readable by its user only");
    }

    // Bob signs in as himself: Alice's task does not exist for him.
    let stranger = taskwire_as(p, "bob", &bob, &["tasks", "get", &id, "--url", url]);
    assert!(signed_in(&stranger), "{stranger}");
    assert_ne!(stranger.code, Some(0), "{stranger}");
    assert!(
        stranger.stderr.to_lowercase().contains("not found"),
        "{stranger}"
    );

    // Her next command needs no sign-in: the kept token (refreshed when expired) is sent.
    std::thread::sleep(Duration::from_secs(ACCESS_TTL + 1));
    let waited = taskwire_as(p, "nobody", &alice, &["wait", &id, "--url", url]);
    assert_eq!(waited.code, Some(0), "{waited}");
    assert!(
        !signed_in(&waited),
        "refreshed, not signed in again: {waited}"
    );
    assert!(waited.stdout.contains("任务完成！"), "{waited}");
    let refreshed = kept(&alice)["tokens"][url]["access_token"].clone();
    assert_ne!(refreshed, Value::from(token.as_str()), "a new access token");

    // A token the server refuses as expired (the client thinks it fresh: its clock is
    // behind) is refreshed and the request sent again.
    std::thread::sleep(Duration::from_secs(ACCESS_TTL + 1));
    let mut file = kept(&alice);
    file["tokens"][url]["expires_at"] = Value::from(u64::MAX / 2);
    std::fs::write(&alice, file.to_string()).expect("rewrite the token file");
    let got = taskwire_as(p, "nobody", &alice, &["tasks", "get", &id, "--url", url]);
    assert_eq!(got.code, Some(0), "{got}{}", server.log());
    assert!(!signed_in(&got), "refreshed after the 401: {got}");
    assert!(
        got.stderr
            .contains("the access token was refused; refreshed it"),
        "the server refused it first: {got}"
    );

    // A refresh token the server refuses too (revoked, rotated away) opens the browser.
    std::thread::sleep(Duration::from_secs(ACCESS_TTL + 1));
    let mut file = kept(&alice);
    file["tokens"][url]["refresh_token"] = Value::from("revoked");
    std::fs::write(&alice, file.to_string()).expect("rewrite the token file");
    let again = taskwire_as(p, "alice", &alice, &["tasks", "get", &id, "--url", url]);
    assert_eq!(again.code, Some(0), "{again}");
    assert!(signed_in(&again), "{again}");

    // Logged out, the next command signs in again.
    let out = run(
        &Argv::new(procs::taskwire())
            .args(&["logout", url])
            .env("TASKWIRE_TOKENS", &alice),
        LIMIT,
    );
    assert_eq!(out.code, Some(0), "{out}");
    assert!(out.stderr.contains("signed out"), "{out}");
    assert_eq!(kept(&alice)["tokens"], serde_json::json!({}));
    let again = taskwire_as(p, "alice", &alice, &["tasks", "result", &id, "--url", url]);
    assert_eq!(again.code, Some(0), "{again}");
    assert!(signed_in(&again), "{again}");
    assert!(again.stdout.contains("任务完成！"), "{again}");
}

#[test]
fn a_machine_signs_in_with_client_credentials() {
    let Some(p) = peers::ready("a_machine_signs_in_with_client_credentials") else {
        return;
    };
    let (_issuer, server) = deployment(p, "cli-client-credentials");
    let url = server.url.as_str();
    let args = [
        "call",
        "long_running_task",
        "--url",
        url,
        "--client-credentials",
        "machine",
    ];
    let without = run(&Argv::new(procs::taskwire()).args(&args), LIMIT);
    assert_eq!(without.code, Some(2), "{without}");
    assert!(
        without.stderr.contains("TASKWIRE_CLIENT_SECRET"),
        "{without}"
    );
    // A token of the user's own: no sign-in, the server's refusal stands.
    let own = run(
        &Argv::new(procs::taskwire())
            .args(&[
                "tools",
                "--url",
                url,
                "--header",
                "Authorization: Bearer mine",
            ])
            .env("TASKWIRE_CLIENT_SECRET", "machine-secret"),
        LIMIT,
    );
    assert_eq!(own.code, Some(5), "{own}");
    assert!(!signed_in(&own) && own.stderr.contains("401"), "{own}");
    let called = run(
        &Argv::new(procs::taskwire())
            .args(&args)
            .env("TASKWIRE_CLIENT_SECRET", "machine-secret")
            .env("RUST_LOG", "taskwire_oauth=debug"),
        LIMIT,
    );
    assert_eq!(called.code, Some(0), "{called}{}", server.log());
    assert!(!signed_in(&called), "no browser: {called}");
    assert!(called.stdout.contains("任务完成！"), "{called}");
}
