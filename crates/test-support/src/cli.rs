//! Runs the built `junction` binary: one command to completion, `junction call` against
//! its own conformance server, or `junction serve NAME --http` for as long as a test needs.
//!
//! The binary is found next to the test executable: Cargo sets `CARGO_BIN_EXE_junction`
//! only in the integration tests of the crate that owns the binary (junction-cli), and
//! builds it before running them into the directory above the test executables'
//! (`target/debug/junction` beside `target/debug/deps/`).

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use crate::process::{run, Run};

/// The path of the built `junction` binary, as text (tests pass it as an argument too).
pub fn junction_exe() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let test = std::env::current_exe().expect("the test executable's path");
        let name = format!("junction{}", std::env::consts::EXE_SUFFIX);
        let found: Option<PathBuf> = test
            .ancestors()
            .skip(1)
            .take(2)
            .map(|dir| dir.join(&name))
            .find(|path| path.is_file());
        let path = found.unwrap_or_else(|| {
            panic!(
                "no `{name}` next to {}: run the tests of junction-cli, which build it",
                test.display()
            )
        });
        path.into_os_string()
            .into_string()
            .expect("the target directory's path is UTF-8")
    })
}

/// `junction` with its user config directory in `config_home`: every test that runs
/// `junction chat` or `junction run` starts it so, so that no test reads another's consent
/// answers, tool pins or user servers, nor those of the real home.
pub fn host_command(config_home: &Path) -> Command {
    let mut command = Command::new(junction_exe());
    command.env("XDG_CONFIG_HOME", config_home);
    command
}

/// `junction ARGS...`.
pub fn junction(args: &[&str]) -> Run {
    run(junction_exe(), args)
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
    args.extend_from_slice(&["--", junction_exe(), "serve", "conformance"]);
    junction(&args)
}

/// Starts `junction serve NAME --http ADDR FLAGS...` and returns it with the first line it
/// printed (`listening on URL` once bound; empty when it exited first).
pub fn spawn_serve<S: AsRef<OsStr>>(name: &str, addr: &str, flags: &[S]) -> (Child, String) {
    let mut child = Command::new(junction_exe())
        .args(["serve", name, "--http", addr])
        .args(flags)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("could not start junction serve: {e}"));
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("junction serve's stdout is readable");
    (child, line)
}

/// `junction serve NAME --http 127.0.0.1:0 FLAGS...`, running until dropped.
pub struct HttpServe {
    child: Child,
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
        let (child, line) = spawn_serve(name, &format!("127.0.0.1:{port}"), flags);
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
