//! The official conformance suite's client scenarios against our client: the suite starts
//! each scenario's server and runs `conformance-client URL` (our `HttpClient`, see
//! `adapters/demo/src/bin/conformance-client.rs`) against it, OAuth (`auth/*`) included. The
//! tally goes to `<target>/run-all/conformance.txt`.

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

/// The `auth/*` scenarios both releases score for 2025-11-25, and whether our client must
/// refuse to go on (exit 1, as the scenario expects: it stops after a bounded number of
/// step-ups).
const AUTH: [(&str, bool); 14] = [
    ("auth/metadata-default", false),
    ("auth/metadata-var1", false),
    ("auth/metadata-var2", false),
    ("auth/metadata-var3", false),
    ("auth/basic-cimd", false),
    ("auth/scope-from-www-authenticate", false),
    ("auth/scope-from-scopes-supported", false),
    ("auth/scope-omitted-when-undefined", false),
    ("auth/scope-step-up", false),
    ("auth/scope-retry-limit", true),
    ("auth/token-endpoint-auth-basic", false),
    ("auth/token-endpoint-auth-post", false),
    ("auth/token-endpoint-auth-none", false),
    ("auth/pre-registration", false),
];

/// 0.1.16's `auth/*` scenarios scored for 2025-03-26 (no Protected Resource Metadata) and its
/// client credentials extension with a secret.
const AUTH_STABLE_MORE: [&str; 3] = [
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/client-credentials-basic",
];

/// 0.2.0-alpha.12's `auth/*` scenarios of 2026-07-28 only, and the step-up in that era's
/// stateless requests; whether our client must refuse to go on (a resource, issuer or `iss`
/// that is not the one asked for).
const AUTH_2026: [(&str, bool); 12] = [
    ("auth/resource-mismatch", true),
    ("auth/offline-access-scope", false),
    ("auth/offline-access-not-supported", false),
    ("auth/authorization-server-migration", false),
    ("auth/iss-supported", false),
    ("auth/iss-not-advertised", false),
    ("auth/iss-supported-missing", true),
    ("auth/iss-wrong-issuer", true),
    ("auth/iss-unexpected", true),
    ("auth/iss-normalized", true),
    ("auth/metadata-issuer-mismatch", true),
    ("auth/scope-step-up", false),
];

/// One scenario to run: its name, the spec version to name, and whether our client must
/// refuse (exit 1) for the scenario to pass.
type Scenario<'a> = (&'a str, Option<&'a str>, bool);

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
/// exit (for one our client must refuse, that it exited 1 and the suite passed); returns
/// (checks passed, checks run).
fn pass_all(test: &str, release: &str, scenarios: &[Scenario]) -> Option<(u32, u32)> {
    let (mut passed, mut checks) = (0, 0);
    for &(name, version, refuses) in scenarios {
        let run = scenario(test, release, name, version)?;
        let line = tally(&run, "Passed:");
        let (ok, of) = counts(line);
        assert_eq!(ok, of, "{name} {version:?}: {line}\n{run}");
        assert!(line.contains(" 0 warnings"), "{name}: {line}\n{run}");
        if refuses {
            assert!(
                run.stderr.contains("Client exited with code 1"),
                "{name}: our client went on\n{run}"
            );
        } else {
            assert!(
                !run.stderr.contains("EXITED WITH ERROR")
                    && !run.stderr.contains("exited with code"),
                "{name}: our client failed\n{run}"
            );
        }
        assert_eq!(run.code, Some(0), "{name}\n{run}");
        passed += ok;
        checks += of;
    }
    Some((passed, checks))
}

#[test]
fn suite_0_1_16_client_scenarios_pass() {
    let scenarios: Vec<_> = STABLE.iter().map(|&name| (name, None, false)).collect();
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
        .map(|&(name, version)| (name, Some(version), false))
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

/// The names of `scenarios` without their `auth/` prefix, for a tally line.
fn names(scenarios: &[Scenario]) -> String {
    let names: Vec<&str> = scenarios
        .iter()
        .map(|(name, _, _)| name.trim_start_matches("auth/"))
        .collect();
    names.join(", ")
}

#[test]
fn suite_0_1_16_auth_scenarios_pass() {
    let more = AUTH_STABLE_MORE.iter().map(|&name| (name, false));
    let scenarios: Vec<_> = (AUTH.iter().copied().chain(more))
        .map(|(name, refuses)| (name, None, refuses))
        .collect();
    let Some((passed, checks)) = pass_all("conformance 0.1.16 auth", "stable", &scenarios) else {
        return;
    };
    record(&format!(
        "conformance 0.1.16, client auth scenarios ({}): {passed}/{checks} checks passed",
        names(&scenarios)
    ));
    assert!(
        checks >= 249,
        "fewer checks than the 249 seen: {passed}/{checks}"
    );
}

#[test]
fn suite_0_2_0_alpha_12_auth_scenarios_pass() {
    let scenarios: Vec<_> = AUTH
        .iter()
        .map(|&(name, refuses)| (name, Some("2025-11-25"), refuses))
        .collect();
    let Some((passed, checks)) = pass_all("conformance 0.2.0-alpha.12 auth", "next", &scenarios)
    else {
        return;
    };
    record(&format!(
        "conformance 0.2.0-alpha.12, client auth scenarios at 2025-11-25 ({}): \
         {passed}/{checks} checks passed",
        names(&scenarios)
    ));
    assert!(
        checks >= 245,
        "fewer checks than the 245 seen: {passed}/{checks}"
    );
}

#[test]
fn suite_0_2_0_alpha_12_auth_2026_scenarios_pass() {
    let scenarios: Vec<_> = AUTH_2026
        .iter()
        .map(|&(name, refuses)| (name, Some("2026-07-28"), refuses))
        .collect();
    let Some((passed, checks)) =
        pass_all("conformance 0.2.0-alpha.12 auth 2026", "next", &scenarios)
    else {
        return;
    };
    record(&format!(
        "conformance 0.2.0-alpha.12, client auth scenarios at 2026-07-28 ({}): \
         {passed}/{checks} checks passed",
        names(&scenarios)
    ));
    assert!(
        checks >= 143,
        "fewer checks than the 143 seen: {passed}/{checks}"
    );
}
