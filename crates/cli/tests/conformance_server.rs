//! The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16, every
//! server scenario, pending ones included) against `junction serve conformance --http`.
//! The suite comes from `scripts/test` (`JUNCTION_NODE`, `JUNCTION_CONFORMANCE`); without it
//! this test fails and says so.

mod common;

use std::path::Path;

use common::{peer, run, HttpServe};
use serde_json::Value;

/// How many scenarios `--suite all` runs in 0.1.16.
const SCENARIOS: usize = 32;

/// One check of one scenario, as the suite wrote it to `checks.json`.
struct Check {
    scenario: String,
    id: String,
    status: String,
    message: String,
}

/// Every check of every scenario directory under `dir` (named `server-<scenario>-<time>`),
/// and how many scenarios there were.
fn read_checks(dir: &Path) -> (usize, Vec<Check>) {
    let mut scenarios = 0;
    let mut checks = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let file = path.join("checks.json");
        if !file.is_file() {
            continue;
        }
        scenarios += 1;
        let scenario = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&file).unwrap();
        let list: Vec<Value> = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not a list of checks ({e})", file.display()));
        for c in list {
            let field = |name: &str| c[name].as_str().unwrap_or_default().to_owned();
            checks.push(Check {
                scenario: scenario.clone(),
                id: field("id"),
                status: field("status"),
                message: [field("errorMessage"), c["details"].to_string()].join(" "),
            });
        }
    }
    (scenarios, checks)
}

#[test]
fn every_conformance_scenario_passes_over_streamable_http() {
    let node = peer("JUNCTION_NODE");
    let suite = peer("JUNCTION_CONFORMANCE");
    let server = HttpServe::start("conformance", &[]);
    let out = std::env::temp_dir().join(format!("junction-conformance-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let url = server.url.clone();
    let run = run(
        &node,
        &[
            &suite,
            "server",
            "--url",
            &url,
            "--suite",
            "all",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    let (scenarios, checks) = read_checks(&out);
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(
        server.stop(),
        Some(0),
        "junction serve ends cleanly on SIGTERM"
    );

    let listed = |status: &str| -> Vec<String> {
        checks
            .iter()
            .filter(|c| c.status == status)
            .map(|c| format!("{} / {}: {}", c.scenario, c.id, c.message))
            .collect()
    };
    let warnings = listed("WARNING");
    if !warnings.is_empty() {
        eprintln!("conformance warnings:\n{}", warnings.join("\n"));
    }
    let failures = listed("FAILURE");
    assert!(
        failures.is_empty(),
        "failing checks:\n{}\n\nsuite output:\n{}{}",
        failures.join("\n"),
        run.stdout,
        run.stderr
    );
    assert_eq!(
        scenarios, SCENARIOS,
        "every scenario ran and wrote its checks\n{}{}",
        run.stdout, run.stderr
    );
    let passed = checks.iter().filter(|c| c.status == "SUCCESS").count();
    assert!(passed > 0, "no check passed");
    assert_eq!(
        run.code, 0,
        "the suite exits 0 when nothing failed\n{}{}",
        run.stdout, run.stderr
    );
    eprintln!(
        "conformance: {scenarios} scenarios, {passed} checks passed, {} warnings",
        warnings.len()
    );
}
