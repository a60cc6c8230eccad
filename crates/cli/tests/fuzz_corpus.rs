//! The fuzz targets' smoke test on the stable toolchain: every input of the checked-in
//! corpus (`fuzz/corpus/<target>/`, seeds and the inputs of crashes once found) runs
//! through the same entry functions the cargo-fuzz targets call (`fuzz/src/lib.rs`, compiled
//! here as a module), so a regression of any target fails CI without nightly.

#[path = "../../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod entries;

use std::path::PathBuf;

fn replay(target: &str, entry: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "{target} has a seed corpus");
    for input in &inputs {
        let data = std::fs::read(input).unwrap();
        let outcome = std::panic::catch_unwind(|| entry(&data));
        assert!(outcome.is_ok(), "{target} failed on {}", input.display());
    }
    eprintln!("{target}: {} inputs replayed", inputs.len());
}

#[test]
fn jsonrpc() {
    replay("jsonrpc", entries::jsonrpc);
}

#[test]
fn server_handshake() {
    replay("server_handshake", entries::server_handshake);
}

#[test]
fn server_stateless() {
    replay("server_stateless", entries::server_stateless);
}

#[test]
fn sse() {
    replay("sse", entries::sse);
}

#[test]
fn http_endpoint() {
    replay("http_endpoint", entries::http_endpoint);
}

#[test]
fn uri_template() {
    replay("uri_template", entries::uri_template);
}

#[test]
fn elicitation() {
    replay("elicitation", entries::elicitation);
}

#[test]
fn host_config() {
    replay("host_config", entries::host_config);
}
