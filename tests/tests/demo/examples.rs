//! The adapters' examples run as a user would run them: each client example against each
//! server example, across runtimes.

use std::time::Duration;

use taskwire_tests::examples::binary;
use taskwire_tests::peers::{run, Argv};

fn client_against_server(client: &str, server: &str) {
    let ran = run(
        &Argv::new(binary(client)).arg(binary(server)),
        Duration::from_secs(30),
    );
    assert_eq!(ran.code, Some(0), "{ran}");
    let lines: Vec<&str> = ran.stdout.lines().collect();
    let expected_name = server.replace("_server", "-example");
    assert_eq!(lines[0], format!("connected to {expected_name}"), "{ran}");
    assert_eq!(lines[1], "echo: hello", "{ran}");
    let statuses: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("status: "))
        .collect();
    for step in ["working 3 to go", "working 2 to go", "working 1 to go"] {
        assert!(statuses.contains(&step), "no `{step}` status\n{ran}");
    }
    assert_eq!(lines.last(), Some(&"result: liftoff"), "{ran}");
}

#[test]
fn smol_client_drives_smol_server() {
    client_against_server("smol_client", "smol_server");
}

#[test]
fn tokio_client_drives_tokio_server() {
    client_against_server("tokio_client", "tokio_server");
}

#[test]
fn smol_client_drives_tokio_server() {
    client_against_server("smol_client", "tokio_server");
}

#[test]
fn tokio_client_drives_smol_server() {
    client_against_server("tokio_client", "smol_server");
}
