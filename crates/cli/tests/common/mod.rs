//! Runs the built `junction` binary and the interop peers for the end-to-end tests.

#![allow(dead_code)] // each test file uses part of this module

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

pub mod fake_model;
pub mod fixtures;
pub mod sdk_clients;

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

    /// Fails the test, with both streams, unless `line` is a whole line of stdout.
    #[track_caller]
    pub fn assert_line(&self, line: &str) {
        assert!(
            self.stdout.lines().any(|l| l == line),
            "line {line:?} missing; exit {}\nstdout:\n{}\nstderr:\n{}",
            self.code,
            self.stdout,
            self.stderr
        );
    }
}

impl Run {
    /// Runs `command` to completion with `input` written to its stdin (closed at once when
    /// `None`), collecting both output streams.
    pub fn of(command: &mut Command, input: Option<&str>) -> Run {
        let mut child = command
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("could not run {command:?}: {e}"));
        if let Some(input) = input {
            let mut stdin = child.stdin.take().expect("stdin is piped");
            stdin.write_all(input.as_bytes()).expect("write stdin");
        }
        let output = child.wait_with_output().expect("wait for the process");
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// Runs `program args` to completion with stdin closed.
pub fn run(program: &str, args: &[&str]) -> Run {
    Run::of(Command::new(program).args(args), None)
}

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

/// `junction` with its user config directory in `config_home`: every test that runs
/// `junction chat` or `junction run` starts it so, so that no test reads another's consent
/// answers, tool pins or user servers, nor those of the real home.
pub fn host_command(config_home: &Path) -> Command {
    let mut command = Command::new(JUNCTION);
    command.env("XDG_CONFIG_HOME", config_home);
    command
}

/// `junction ARGS...`.
pub fn junction(args: &[&str]) -> Run {
    run(JUNCTION, args)
}

/// `junction call FLAGS... -- junction serve conformance`, speaking the handshake family
/// (2025-11-25) unless `flags` name a `--protocol-version`: the tests that use it pin the
/// fixtures exactly as that family prints them (auto mode would speak 2026-07-28, whose
/// results carry `resultType` and the server's identity too).
pub fn call_conformance(flags: &[&str]) -> Run {
    let mut args = vec!["call"];
    if !flags.contains(&"--protocol-version") {
        args.extend_from_slice(&["--protocol-version", "2025-11-25"]);
    }
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

/// `junction serve NAME --http 127.0.0.1:0 FLAGS...`, running until dropped.
pub struct HttpServe {
    child: std::process::Child,
    /// The endpoint's URL (`…/mcp`) with `localhost` as its host (the conformance suite's guard test
    /// needs a loopback name it can compare).
    pub url: String,
    /// The port it listens on.
    pub port: u16,
}

impl HttpServe {
    /// Starts the server on a free port and reads the one line it prints once bound.
    pub fn start(name: &str, flags: &[&str]) -> HttpServe {
        HttpServe::start_on(name, 0, flags)
    }

    /// Starts the server on `port` of 127.0.0.1 (0: a free one).
    pub fn start_on(name: &str, port: u16, flags: &[&str]) -> HttpServe {
        use std::io::BufRead;
        let mut child = Command::new(JUNCTION)
            .args(["serve", name, "--http", &format!("127.0.0.1:{port}")])
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("could not start junction serve: {e}"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("junction serve's stdout is readable");
        let port = line
            .trim_end()
            .strip_prefix("listening on http://127.0.0.1:")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("unexpected first line from junction serve: {line:?}"));
        HttpServe {
            child,
            url: format!("http://localhost:{port}/mcp"),
            port: port
                .parse()
                .expect("the port junction serve printed is a number"),
        }
    }

    /// Kills it with SIGKILL, as a crash would end it: no session is closed.
    pub fn kill(mut self) {
        self.child.kill().expect("junction serve can be killed");
        let _ = self.child.wait();
    }

    /// Stops it with SIGTERM and returns its exit code.
    pub fn stop(mut self) -> Option<i32> {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .is_ok_and(|s| s.success());
        assert!(sent, "could not signal junction serve");
        self.child.wait().ok().and_then(|s| s.code())
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        // A test that failed before `stop` must not leave the server running.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
