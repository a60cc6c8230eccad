//! Runs the built `junction` binary and the interop peers for the end-to-end tests.

#![allow(dead_code)] // each test file uses part of this module

use std::process::{Command, Stdio};

use serde_json::Value;

/// The binary under test.
pub const JUNCTION: &str = env!("CARGO_BIN_EXE_junction");

/// What a finished process left behind.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Stdout as JSON; fails the test with both streams when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}); exit {}\nstdout:\n{}\nstderr:\n{}",
                self.code, self.stdout, self.stderr
            )
        })
    }
}

/// Runs `program args` to completion with stdin closed.
pub fn run(program: &str, args: &[&str]) -> Run {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("could not run {program}: {e}"));
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `junction ARGS...`.
pub fn junction(args: &[&str]) -> Run {
    run(JUNCTION, args)
}

/// `junction call FLAGS... -- junction serve conformance`.
pub fn call_conformance(flags: &[&str]) -> Run {
    let mut args = vec!["call"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--", JUNCTION, "serve", "conformance"]);
    junction(&args)
}

/// An interop peer's path from the environment that `scripts/test` sets up.
pub fn peer(variable: &str) -> String {
    match std::env::var(variable) {
        Ok(value) if !value.is_empty() => value,
        _ => panic!(
            "{variable} is not set: the interop tests need the pinned external peers. Run the \
             tests with scripts/test (it installs them and exports JUNCTION_*), or source the \
             env.sh that scripts/install-tools wrote before running cargo test"
        ),
    }
}
