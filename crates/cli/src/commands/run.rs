//! `junction run --model PROVIDER:SPEC "MESSAGE"`: one turn without a person. The servers
//! start, the message goes to the model, the transcript is printed; nothing is read from
//! stdin, so calls that need consent are denied unless `--yes` allows them.
//!
//! Exits 0 when every server started and the model answered, 1 when a server failed to
//! start or the model failed, 2 on bad usage. SIGINT, SIGTERM or SIGHUP stop the run at
//! once, even in the middle of a tool call (the call is cancelled on its server): every
//! server is shut down and the exit code is 128 + the signal's number.

use std::process::ExitCode;

use junction_host::display;

use super::host_options::{report, HostOptions};
use crate::signals::{Signals, Stop};
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
    let mut signals = match Signals::install() {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("junction run: could not catch signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let terminal = Terminal::stdio(Style::detect());
    let answers = match args.host.answers(false) {
        Answers::Ask => Answers::No,
        other => other,
    };
    let started = tokio::select! {
        biased;
        started = args.host.start(&terminal, answers) => started,
        // Servers still starting are killed with the future that starts them.
        stop = signals.recv() => return stopped(stop),
    };
    let (mut host, failures) = match started {
        Ok(started) => started,
        Err(e) => return report("run", e),
    };
    terminal.say_all(&[format!("you: {}", args.message)]);
    let interrupt = host.interrupt_token();
    let (outcome, stop) = {
        let turn = host.send(args.message);
        tokio::pin!(turn);
        tokio::select! {
            biased;
            stop = signals.recv() => {
                // The turn winds down at once: its calls are cancelled on their servers.
                interrupt.cancel();
                (turn.await, Some(stop))
            }
            outcome = &mut turn => (outcome, None),
        }
    };
    host.shutdown().await;
    if let Some(stop) = stop {
        return stopped(stop);
    }
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

fn stopped(stop: Stop) -> ExitCode {
    eprintln!(
        "junction run: stopped by {}; every server was shut down",
        stop.name()
    );
    stop.exit_code()
}
