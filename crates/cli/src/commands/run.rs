//! `junction run --model PROVIDER:SPEC "MESSAGE"`: one turn without a person. The servers
//! start, the message goes to the model, the transcript is printed; nothing is read from
//! stdin, so calls that need consent are denied unless `--yes` allows them.
//!
//! Exits 0 when every server started and the model answered, 1 when a server failed to
//! start or the model failed, 2 on bad usage.

use std::process::ExitCode;

use junction_host::display;

use super::host_options::{report, HostOptions};
use crate::terminal::{Answers, Style, Terminal};

/// The arguments of `junction run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    host: HostOptions,
    /// What to tell the model.
    #[arg(value_name = "MESSAGE")]
    message: String,
}

/// Runs one turn and prints its transcript.
pub async fn run(args: RunArgs) -> ExitCode {
    let terminal = Terminal::stdio(Style::detect());
    let answers = match args.host.answers(false) {
        Answers::Ask => Answers::No,
        other => other,
    };
    let (mut host, failures) = match args.host.start(&terminal, answers).await {
        Ok(started) => started,
        Err(e) => return report("run", e),
    };
    terminal.say_all(&[format!("you: {}", args.message)]);
    let outcome = host.send(args.message).await;
    host.shutdown().await;
    let mut code = ExitCode::SUCCESS;
    for failure in &failures {
        eprintln!(
            "junction run: server `{}` did not start",
            display::name(&failure.server)
        );
        code = ExitCode::FAILURE;
    }
    if let Err(e) = outcome {
        eprintln!(
            "junction run: the turn failed: {}",
            display::line(&e.to_string())
        );
        code = ExitCode::FAILURE;
    }
    code
}
