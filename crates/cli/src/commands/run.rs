//! `junction run --model PROVIDER:SPEC [MESSAGE]`: one turn without a person, for scripts.
//! The servers start, the message (or, without one, all of stdin) goes to the model, and
//! nothing is asked: calls that need consent are denied unless `--yes` or `--allow` lets
//! them through.
//!
//! `--output-format` says what stdout carries:
//!
//! - `text` (the default): the model's final answer only; the transcript goes to stderr;
//! - `json`: one object at the end: `text`, `stop`, `exitCode`, `toolCalls` (each with
//!   its server, tool, arguments, consent outcome, result and whether it failed), `usage`
//!   (`inputTokens`, `outputTokens` over every answer), `stopReason` (the provider's, of
//!   the last answer), `failedServers` and `stoppedServers` (those that did not start, and
//!   those that stopped during the run) and `conversationId`;
//! - `stream-json`: every host event as one JSON object per line, as it happens (see
//!   `junction_host::events::Event`), then the same final object as `json`.
//!
//! The conversation is saved (see `junction_host::saved`) and its id given on stderr and
//! as `conversationId`; `--continue` or `--resume ID` sends the message into a saved one.
//!
//! Exit codes: 0 the model answered; 1 a server did not start or stopped during the run, or
//! the model failed; 2 bad
//! usage; 3 the turn was cut by `--max-turns`; 4 the model asked for tools and every call
//! was denied; 128 + N when signal N stopped the run (every server is shut down first, and
//! a running call is cancelled on its server).

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};

use junction_host::consent::ConsentAnswer;
use junction_host::display;
use junction_host::events::{Event, EventSink, ServerState};
use junction_host::model::Usage;
use junction_host::server_log::ServerLog;
use junction_host::{Stop, TurnOutcome};
use serde_json::{json, Map, Value};

use super::host_options::{report, HostOptions};
use crate::signals::{Signals, Stop as Signal};
use crate::terminal::events::Renderer;
use crate::terminal::{Answers, Style, Terminal};

/// The model answered.
const DONE: u8 = 0;
/// A server did not start, or the model failed.
const FAILED: u8 = 1;
/// The turn was cut by `--max-turns`.
const MAX_TURNS: u8 = 3;
/// Every call the model asked for was denied.
const ALL_DENIED: u8 = 4;

/// What stdout carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// The final answer; the transcript on stderr.
    Text,
    /// One JSON object at the end.
    Json,
    /// One JSON object per event, then the final object.
    StreamJson,
}

/// The arguments of `junction run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    host: HostOptions,
    /// What stdout carries.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    output_format: OutputFormat,
    /// The most times the model is asked in this turn [default: 10].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_turns: Option<u64>,
    /// What to tell the model; read from stdin when not given.
    #[arg(value_name = "MESSAGE")]
    message: Option<String>,
}

/// Runs one turn.
pub async fn run(args: RunArgs) -> ExitCode {
    let mut signals = match Signals::install() {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("junction run: could not catch signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let message = match message(args.message) {
        Ok(message) => message,
        Err(why) => {
            eprintln!("junction run: {why}");
            return ExitCode::from(2);
        }
    };
    let style = Style::detect_on(&std::io::stderr());
    let terminal = Terminal::stdin_stderr(style);
    let answers = match args.host.answers(false) {
        Answers::Ask => Answers::No,
        other => other,
    };
    let events = Arc::new(Mutex::new(Vec::new()));
    let format = args.output_format;
    let sink = |log| sink(style, format, events.clone(), log);
    let started = tokio::select! {
        started = args.host.start_with(&terminal, answers, sink) => started,
        // Servers still starting are killed with the future that starts them.
        stop = signals.recv() => return stopped(stop),
    };
    let (mut host, failures, mut saving) = match started {
        Ok(started) => (started.host, started.failures, started.saving),
        Err(e) => return report("run", e),
    };
    if let Some(turns) = args.max_turns {
        host = host.with_max_steps(usize::try_from(turns).unwrap_or(usize::MAX));
    }
    terminal.say_all(&[format!("you: {message}")]);
    let interrupt = host.interrupt_token();
    let (outcome, stop) = {
        let turn = host.send(message);
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
    if let Some(saving) = &mut saving {
        saving.save_or_warn(host.conversation(), &terminal);
        terminal.say_all(&[format!(
            "conversation {} saved (go on with it: --resume {0})",
            saving.id()
        )]);
    }
    if let Some(stop) = stop {
        return stopped(stop);
    }
    for failure in &failures {
        eprintln!(
            "junction run: server `{}` did not start",
            display::name(&failure.server)
        );
    }
    let events = events
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let calls = calls(&events);
    let (usage, stop_reason) = usage(&events);
    let stopped_servers = stopped_servers(&events);
    for server in &stopped_servers {
        eprintln!(
            "junction run: server `{}` stopped during the run",
            display::name(server)
        );
    }
    let (code, stop, text, error) = match outcome {
        Err(e) => {
            let why = display::line(&e.to_string());
            eprintln!("junction run: the turn failed: {why}");
            (FAILED, "failed", None, Some(e.to_string()))
        }
        Ok(TurnOutcome { text, stop, .. }) => {
            let all_denied = !calls.is_empty() && calls.iter().all(|c| c.get("denied").is_some());
            let (code, word) = match stop {
                Stop::StepLimit => (MAX_TURNS, "maxTurns"),
                Stop::Interrupted => (FAILED, "interrupted"),
                Stop::Answered if !failures.is_empty() || !stopped_servers.is_empty() => {
                    (FAILED, "answered")
                }
                Stop::Answered if all_denied => (ALL_DENIED, "allDenied"),
                Stop::Answered => (DONE, "answered"),
            };
            (code, word, text, None)
        }
    };
    let mut out = std::io::stdout().lock();
    let written = match args.output_format {
        OutputFormat::Text => match &text {
            Some(text) => writeln!(out, "{}", display::text(text)),
            None => Ok(()),
        },
        OutputFormat::Json | OutputFormat::StreamJson => {
            let summary = json!({
                "text": text,
                "stop": stop,
                "exitCode": code,
                "error": error,
                "failedServers": failures.iter().map(|f| f.server.clone()).collect::<Vec<_>>(),
                "stoppedServers": stopped_servers,
                "toolCalls": calls,
                "usage": usage,
                "stopReason": stop_reason,
                "conversationId": saving.as_ref().map(|s| s.id()),
            });
            writeln!(out, "{}", display::json(&summary.to_string()))
        }
    };
    if let Err(e) = written.and_then(|()| out.flush()) {
        eprintln!("junction run: could not write to stdout: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::from(code)
}

/// The message: the argument, else all of stdin (not from a terminal: nobody would know
/// the run waits for it).
fn message(given: Option<String>) -> Result<String, String> {
    if let Some(message) = given {
        return Ok(message);
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err("no message: pass MESSAGE, or pipe it on stdin".to_owned());
    }
    let mut text = String::new();
    stdin
        .lock()
        .read_to_string(&mut text)
        .map_err(|e| format!("could not read the message from stdin: {e}"))?;
    let text = text.trim().to_owned();
    if text.is_empty() {
        return Err("no message: stdin was empty; pass MESSAGE or pipe it".to_owned());
    }
    Ok(text)
}

/// Renders each event on stderr, keeps it in `kept` (and log messages in `log`), and with
/// `stream-json` writes it to stdout as one line of JSON.
fn sink(
    style: Style,
    format: OutputFormat,
    kept: Arc<Mutex<Vec<Event>>>,
    log: Option<ServerLog>,
) -> EventSink {
    let renderer = Mutex::new(Renderer::new(style));
    EventSink::callback(move |event| {
        super::host_options::keep_log(log.as_ref(), &event);
        let text = renderer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .output(&event);
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
        if format == OutputFormat::StreamJson {
            if let Ok(text) = serde_json::to_string(&event) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", display::json(&text));
                let _ = out.flush();
            }
        }
        kept.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
    })
}

/// The servers that stopped while the run went on (each once, in the order they stopped).
fn stopped_servers(events: &[Event]) -> Vec<String> {
    let mut stopped: Vec<String> = Vec::new();
    for event in events {
        if let Event::ServerStatus {
            server,
            state: ServerState::Stopped { .. },
        } = event
        {
            if !stopped.contains(server) {
                stopped.push(server.clone());
            }
        }
    }
    stopped
}

/// The tokens of every answer the model gave in the run, added up (also when the turn
/// failed later), and why its last answer stopped.
fn usage(events: &[Event]) -> (Usage, Option<String>) {
    let mut total = Usage::default();
    let mut last = None;
    for event in events {
        if let Event::ModelAnswered { usage, stop_reason } = event {
            if let Some(usage) = usage {
                total.add(*usage);
            }
            last.clone_from(stop_reason);
        }
    }
    (total, last)
}

/// Every tool call of the run, from its events: server, tool, arguments, consent, result.
fn calls(events: &[Event]) -> Vec<Value> {
    let mut started: Vec<(String, Map<String, Value>)> = Vec::new();
    for event in events {
        match event {
            Event::ToolCallStarted {
                call_id,
                server,
                tool,
                arguments,
            } => started.push((
                call_id.clone(),
                Map::from_iter([
                    ("id".to_owned(), json!(call_id)),
                    ("server".to_owned(), json!(server)),
                    ("tool".to_owned(), json!(tool)),
                    ("arguments".to_owned(), arguments.clone()),
                    ("consent".to_owned(), json!("notAsked")),
                ]),
            )),
            Event::ConsentAnswered { call_id, answer } => {
                if let Some((_, call)) = started.iter_mut().find(|(c, _)| c == call_id) {
                    call.insert("consent".to_owned(), json!(answer_word(*answer)));
                }
            }
            Event::ToolCallDenied { call_id, reason } => {
                if let Some((_, call)) = started.iter_mut().find(|(c, _)| c == call_id) {
                    call.insert("denied".to_owned(), json!(reason));
                }
            }
            Event::ToolCallFinished {
                call_id,
                is_error,
                output,
            } => {
                if let Some((_, call)) = started.iter_mut().find(|(c, _)| c == call_id) {
                    call.insert("isError".to_owned(), json!(is_error));
                    call.insert("result".to_owned(), json!(output));
                }
            }
            _ => {}
        }
    }
    started.into_iter().map(|(_, m)| Value::Object(m)).collect()
}

fn answer_word(answer: ConsentAnswer) -> &'static str {
    match answer {
        ConsentAnswer::AllowOnce => "allowOnce",
        ConsentAnswer::AllowForSession => "allowForSession",
        ConsentAnswer::AlwaysAllow => "alwaysAllow",
        ConsentAnswer::Deny => "denied",
        ConsentAnswer::NobodyToAsk => "nobodyToAsk",
    }
}

fn stopped(stop: Signal) -> ExitCode {
    eprintln!(
        "junction run: stopped by {}; every server was shut down",
        stop.name()
    );
    stop.exit_code()
}
