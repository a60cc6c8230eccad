//! `junction conformance-client` under the conformance suite 0.2.0-alpha.12
//! (`$JUNCTION_CONFORMANCE_NEXT`), at both revisions' frozen requirement sets: every scored
//! scenario of `--requirements 2025-11-25` passes; at `--requirements 2026-07-28` every scored
//! authorization scenario passes (`iss` validation and normalisation, issuer and resource
//! mismatch, offline access, authorization server migration, step-up included), so do the
//! extension scenarios the suite runs with them (client credentials JWT and basic,
//! enterprise-managed authorization, DPoP with and without nonces, workload identity
//! federation), and no other scored scenario fails
//! (tests-interop/conformance-next-client-expected-failures.yml lists none). No check of any
//! scenario the suite runs fails or warns, the unscored `json-schema-2020-12-preservation`
//! included (the client hands back the schema it kept, byte for byte).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use junction_test_support::cli::junction_exe;
use junction_test_support::conformance::checks_by_scenario;
use junction_test_support::peers::peer;
use junction_test_support::process::run;
use serde_json::Value;

/// Runs the requirement set; returns the checks by scenario after asserting the run passed.
fn requirements(revision: &str, expected_auth: usize) -> BTreeMap<String, Vec<Value>> {
    let node = peer("JUNCTION_NODE");
    let conformance = peer("JUNCTION_CONFORMANCE_NEXT");
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let out = std::env::temp_dir().join(format!("junction-conformance-next-{revision}-{stamp}"));
    let expected = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests-interop/conformance-next-client-expected-failures.yml");
    let command = format!("{junction} conformance-client", junction = junction_exe());
    let mut args = vec![
        conformance.as_str(),
        "client",
        "--command",
        &command,
        "--requirements",
        revision,
        "-o",
        out.to_str().unwrap(),
    ];
    if revision == "2026-07-28" {
        args.extend(["--expected-failures", expected.to_str().unwrap()]);
    }
    let run = run(&node, &args);
    let mut scenarios = BTreeMap::new();
    checks_by_scenario(&out, "", &mut scenarios);
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(
        run.code, 0,
        "{revision}: a scored scenario failed:\n{}\n{}",
        run.stdout, run.stderr
    );
    let mut failures = Vec::new();
    let mut auth = 0;
    for (scenario, checks) in &scenarios {
        // Authorization checks must all pass; elsewhere a check may be SKIPPED where it does
        // not apply at this revision (no `Mcp-Method` on `initialize` in 2026-07-28).
        let is_auth = scenario.starts_with("auth/");
        auth += usize::from(is_auth);
        for check in checks {
            let status = check["status"].as_str().unwrap_or("?");
            let passed = match status {
                "SUCCESS" | "INFO" => true,
                "SKIPPED" => !is_auth,
                _ => false,
            };
            if !passed {
                failures.push(format!(
                    "{scenario}: {} {status}: {}",
                    check["id"], check["description"]
                ));
            }
        }
    }
    assert!(
        scenarios.contains_key("json-schema-2020-12-preservation"),
        "{revision}: the schema echo scenario ran: {:?}",
        scenarios.keys()
    );
    assert!(
        failures.is_empty(),
        "{revision}: checks failed:\n  {}",
        failures.join("\n  ")
    );
    assert_eq!(
        auth,
        expected_auth,
        "{revision}: scored auth scenarios: {:?}",
        scenarios.keys()
    );
    scenarios
}

#[test]
fn every_scored_scenario_of_2025_11_25_passes() {
    requirements("2025-11-25", 20);
}

#[test]
fn every_scored_authorization_scenario_of_2026_07_28_passes() {
    requirements("2026-07-28", 31);
}
