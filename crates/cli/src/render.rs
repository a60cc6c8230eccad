//! What `junction call` prints and the exit code that goes with it. The protocol work happens
//! in `commands::call`; this module only turns its outcome into text, with every control
//! and invisible character a server sent written as an escape (see
//! [`junction_host::display`]).

use std::io::Write;
use std::process::ExitCode;

use junction_protocol::ErrorObject;
use serde::Serialize;
use serde_json::Value;

/// The method succeeded; its result is on stdout.
pub const OK: u8 = 0;
/// The server answered with a JSON-RPC error; the error object is on stdout.
pub const RPC_ERROR: u8 = 1;
/// The tool ran and failed (`isError: true`); the result is on stdout.
pub const TOOL_ERROR: u8 = 2;
/// Bad usage, or the server could not be started, reached or understood; the reason is on
/// stderr.
pub const FAILURE: u8 = 3;

/// What a method produced.
#[derive(Debug)]
pub enum Outcome {
    /// A result.
    Result(Value),
    /// A tool result with `isError: true`.
    ToolError(Value),
    /// A JSON-RPC error from the server.
    RpcError(ErrorObject),
}

/// Prints the outcome as pretty JSON on stdout and returns its exit code.
pub fn outcome(outcome: &Outcome) -> ExitCode {
    let (value, code) = match outcome {
        Outcome::Result(value) => (print_json(value), OK),
        Outcome::ToolError(value) => (print_json(value), TOOL_ERROR),
        Outcome::RpcError(error) => (print_json(error), RPC_ERROR),
    };
    match value {
        Ok(()) => ExitCode::from(code),
        Err(e) => failure(&anyhow::anyhow!(
            "could not write the result to stdout: {e}"
        )),
    }
}

/// Prints why the call could not be made on stderr and returns [`FAILURE`].
pub fn failure(error: &anyhow::Error) -> ExitCode {
    eprintln!(
        "junction call: {}",
        junction_host::display::text(&chain(error))
    );
    ExitCode::from(FAILURE)
}

/// The error and its causes, each said once: library errors word their cause into their
/// own message, so a cause already in the text is not repeated (no "X: X").
pub fn chain(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// Prints `value` as pretty JSON on stdout, escaped for the terminal.
pub fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    let text = junction_host::display::json(&serde_json::to_string_pretty(value)?);
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{text}")?;
    stdout.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words its cause into its message and also gives it as its source, as thiserror
    /// errors of the library do.
    #[derive(Debug)]
    struct Worded(std::io::Error);

    impl std::fmt::Display for Worded {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "could not encode: {}", self.0)
        }
    }

    impl std::error::Error for Worded {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_already_in_the_message_is_said_once() {
        let worded = anyhow::Error::new(Worded(std::io::Error::other("disk full")));
        assert_eq!(chain(&worded), "could not encode: disk full");
        let bare = anyhow::Error::new(std::io::Error::other("disk full")).context("saving");
        assert_eq!(chain(&bare), "saving: disk full");
    }
}
