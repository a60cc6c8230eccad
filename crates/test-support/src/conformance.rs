//! The official MCP conformance suite (0.1.16): running its server suite and reading the
//! checks it writes.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::peers::peer;
use crate::process::{run, Run};

/// The official 0.1.16 suite's whole server run (`--suite all`) against `url`, its
/// results written below `out`.
pub fn server_suite(url: &str, out: &Path) -> Run {
    let node = peer("JUNCTION_NODE");
    let suite = peer("JUNCTION_CONFORMANCE");
    let out = out.to_str().expect("a UTF-8 path");
    run(
        &node,
        &[&suite, "server", "--url", url, "--suite", "all", "-o", out],
    )
}

/// Every `checks.json` under `dir`, keyed by scenario (the directory name without its
/// timestamp, with `auth/` kept).
pub fn checks_by_scenario(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Vec<Value>>) {
    for entry in std::fs::read_dir(dir).expect("the output directory is readable") {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let checks = path.join("checks.json");
        if checks.is_file() {
            let scenario = scenario_of(&name).to_owned();
            let text = std::fs::read_to_string(&checks).expect("checks.json is readable");
            let parsed: Vec<Value> = serde_json::from_str(&text).expect("checks.json is JSON");
            out.insert(format!("{prefix}{scenario}"), parsed);
        } else if path.is_dir() {
            checks_by_scenario(&path, &format!("{prefix}{name}/"), out);
        }
    }
}

/// The scenario of an output directory named `<scenario>-<ISO timestamp with dashes>`: the
/// timestamp starts at the first `-YYYY-MM-DDT`. (Searching for the last `-20` would cut
/// inside the time whenever a minute or second reads 20, and the first `-NNNN-` inside a
/// name such as `json-schema-2020-12-preservation` or `sep-2322-...`.)
pub fn scenario_of(name: &str) -> &str {
    // `-` then digits and dashes in this shape, then `T`.
    const SHAPE: &[u8] = b"-dddd-dd-ddT";
    let bytes = name.as_bytes();
    (0..bytes.len())
        .find(|&i| {
            bytes.len() >= i + SHAPE.len()
                && SHAPE.iter().zip(&bytes[i..]).all(|(want, got)| match want {
                    b'd' => got.is_ascii_digit(),
                    want => want == got,
                })
        })
        .map_or(name, |i| &name[..i])
}

#[cfg(test)]
mod tests {
    use super::scenario_of;

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
        assert_eq!(
            scenario_of("json-schema-2020-12-preservation-2026-12-04T17-14-43-792Z"),
            "json-schema-2020-12-preservation"
        );
        assert_eq!(
            scenario_of("sep-2322-client-request-state-2026-12-04T17-20-20-020Z"),
            "sep-2322-client-request-state"
        );
        assert_eq!(scenario_of("initialize"), "initialize");
    }
}
