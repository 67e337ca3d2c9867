//! The official conformance suite's client scenarios against our client: the suite starts
//! each scenario's server and runs `conformance-client URL` (our `HttpClient`, see
//! `adapters/demo/src/bin/conformance-client.rs`) against it. Left out: the `auth/*`
//! scenarios (OAuth; our client only sends the headers it is given). The tally goes to
//! `<target>/run-all/conformance.txt`.

use std::time::Duration;

use taskwire_tests::peers::{self, Run};

use crate::common::{counts, record, tally};

/// 0.1.16's client scenarios but OAuth (all of them 2025-11-25).
const STABLE: [&str; 4] = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
];

/// 0.2.0-alpha.12's client scenarios of 2026-07-28 but OAuth, with the spec version each
/// runs at.
const NEXT: [(&str, &str); 9] = [
    ("tools_call", "2026-07-28"),
    ("request-metadata", "2026-07-28"),
    ("sep-2322-client-request-state", "2026-07-28"),
    ("http-standard-headers", "2026-07-28"),
    ("http-custom-headers", "2026-07-28"),
    ("http-invalid-tool-headers", "2026-07-28"),
    ("json-schema-ref-no-deref", "2026-07-28"),
    ("json-schema-2020-12-preservation", "2026-07-28"),
    ("json-schema-2020-12-preservation", "2025-11-25"),
];

/// Runs one client scenario of `release` (`stable` or `next`) against `conformance-client`.
fn scenario(test: &str, release: &str, name: &str, version: Option<&str>) -> Option<Run> {
    let peers = peers::ready(test)?;
    let client = peers::demo::binary("conformance-client");
    let client = client.to_str().expect("a UTF-8 path");
    let mut argv = vec!["client", "--command", client, "--scenario", name];
    if let Some(version) = version {
        argv.extend(["--spec-version", version]);
    }
    Some(peers::run(
        &peers.conformance(release, &argv),
        Duration::from_secs(120),
    ))
}

/// Runs `scenarios` and asserts that each passes every check with no warning and a clean
/// exit; returns (checks passed, checks run).
fn pass_all(test: &str, release: &str, scenarios: &[(&str, Option<&str>)]) -> Option<(u32, u32)> {
    let (mut passed, mut checks) = (0, 0);
    for &(name, version) in scenarios {
        let run = scenario(test, release, name, version)?;
        let line = tally(&run, "Passed:");
        let (ok, of) = counts(line);
        assert_eq!(ok, of, "{name} {version:?}: {line}\n{run}");
        assert!(line.contains(" 0 warnings"), "{name}: {line}\n{run}");
        assert!(
            !run.stderr.contains("EXITED WITH ERROR") && !run.stderr.contains("exited with code"),
            "{name}: our client failed\n{run}"
        );
        assert_eq!(run.code, Some(0), "{name}\n{run}");
        passed += ok;
        checks += of;
    }
    Some((passed, checks))
}

#[test]
fn suite_0_1_16_client_scenarios_pass() {
    let scenarios: Vec<_> = STABLE.iter().map(|&name| (name, None)).collect();
    let Some((passed, checks)) = pass_all("conformance 0.1.16 clients", "stable", &scenarios)
    else {
        return;
    };
    record(&format!(
        "conformance 0.1.16, client scenarios ({}): {passed}/{checks} checks passed",
        STABLE.join(", ")
    ));
    assert!(
        checks >= 10,
        "fewer checks than the 10 seen: {passed}/{checks}"
    );
}

#[test]
fn suite_0_2_0_alpha_12_client_scenarios_pass() {
    let scenarios: Vec<_> = NEXT
        .iter()
        .map(|&(name, version)| (name, Some(version)))
        .collect();
    let Some((passed, checks)) = pass_all("conformance 0.2.0-alpha.12 clients", "next", &scenarios)
    else {
        return;
    };
    let names: Vec<String> = NEXT.iter().map(|(n, v)| format!("{n}@{v}")).collect();
    record(&format!(
        "conformance 0.2.0-alpha.12, client scenarios ({}): {passed}/{checks} checks passed",
        names.join(", ")
    ));
    assert!(
        checks >= 66,
        "fewer checks than the 66 seen: {passed}/{checks}"
    );
}
