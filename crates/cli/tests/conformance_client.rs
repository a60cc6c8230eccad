//! `junction conformance-client` as the client under test of the official MCP conformance
//! suite: every scenario of `--suite all` passes (the authorization ones included: discovery,
//! registration, PKCE, scopes and step-up, token endpoint auth, 2025-03-26 back-compat,
//! resource mismatch, offline access, the client-credentials and cross-app access
//! extensions); tests-interop/conformance-client-expected-failures.yml lists none, and the
//! suite checks it in both directions.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use common::{checks_by_scenario, peer, run, scenario_of, JUNCTION};

/// Scenarios of `--suite all` in 0.1.16.
const ALL_SCENARIOS: usize = 26;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn scenario_names_are_read_whatever_the_time() {
    assert_eq!(
        scenario_of("sse-retry-2026-12-02T17-20-05-120Z"),
        "sse-retry"
    );
    assert_eq!(
        scenario_of("elicitation-sep1034-client-defaults-2026-12-02T20-20-20-020Z"),
        "elicitation-sep1034-client-defaults"
    );
    assert_eq!(scenario_of("initialize"), "initialize");
}

#[test]
fn every_scenario_of_the_client_suite_passes() {
    let node = peer("JUNCTION_NODE");
    let conformance = peer("JUNCTION_CONFORMANCE");
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let out = std::env::temp_dir().join(format!("junction-conformance-client-{stamp}"));
    let expected = workspace_root().join("tests-interop/conformance-client-expected-failures.yml");
    let command = format!("{JUNCTION} conformance-client");
    let run = run(
        &node,
        &[
            &conformance,
            "client",
            "--command",
            &command,
            "--suite",
            "all",
            "--expected-failures",
            expected.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
    );

    let mut scenarios = BTreeMap::new();
    checks_by_scenario(&out, "", &mut scenarios);
    let mut failures = Vec::new();
    for (scenario, checks) in &scenarios {
        if checks.is_empty() {
            failures.push(format!("{scenario}: no checks"));
        }
        for check in checks {
            let status = check["status"].as_str().unwrap_or("?");
            if status != "SUCCESS" && status != "INFO" {
                failures.push(format!(
                    "{scenario}: {} {status}: {}",
                    check["id"],
                    check.get("errorMessage").unwrap_or(&check["details"])
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    assert!(
        failures.is_empty(),
        "scenarios failed:\n  {}\nstdout:\n{}\nstderr:\n{}",
        failures.join("\n  "),
        run.stdout,
        run.stderr
    );
    assert_eq!(
        scenarios.len(),
        ALL_SCENARIOS,
        "the suite has {ALL_SCENARIOS} scenarios, got {:?}",
        scenarios.keys().collect::<Vec<_>>()
    );
    assert_eq!(
        run.code,
        0,
        "the suite found a failure not in {} (or a listed one that now passes):\n{}\n{}",
        expected.display(),
        run.stdout,
        run.stderr
    );
}
