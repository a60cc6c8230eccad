//! Running a program to completion and keeping what it left behind.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

/// What a finished process left behind.
#[derive(Debug)]
pub struct Run {
    /// Its exit code (-1 when a signal ended it).
    pub code: i32,
    /// Its standard output, decoded lossily.
    pub stdout: String,
    /// Its standard error, decoded lossily.
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
