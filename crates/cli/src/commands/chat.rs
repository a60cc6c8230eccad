//! `junction chat`: a conversation with the model over the configured servers.
//!
//! The servers start (those that fail are reported and the others go on), their tools,
//! prompt commands and resources are listed, then each line is:
//!
//! - plain text: sent to the model, whose turn is rendered as it happens;
//! - `/server:prompt args`: the server's prompt joins the conversation and the model answers;
//! - `@server:uri [text]`: the resource is attached as context (and `text`, if any, sent);
//! - `/tools`, `/prompts`, `/resources`, `/servers`, `/restart NAME`, `/logs [N]`,
//!   `/roots [add DIR]`, `/help`, `/quit`.
//!
//! Servers are offered the working directory as a root, and each `--root DIR` (a server's
//! own `roots` in the config replace these; `--no-roots` offers none).
//!
//! A server that stops is reported at once; the next call to it starts it again (with
//! back-off), and `/restart NAME` does so now (also for one that failed to start).
//!
//! On a terminal the line editor completes commands, attachments and prompt arguments (Tab)
//! and the host's questions are asked; with stdin piped, lines are read as they come,
//! echoed, and the questions are answered no (or yes with `--yes`).
//!
//! The conversation is saved after every line (see `junction_host::saved`): `--continue`
//! goes on with the one saved last in this directory, `--resume ID` with a given one, and
//! `--no-save` keeps none.
//!
//! Ctrl-C (or Esc, on a terminal) during a turn stops that turn only: its running tool
//! calls are cancelled on their servers, the model's request is dropped, the conversation
//! keeps what happened and the prompt comes back (a consent question or form being read is
//! given up, counting as declined; a model's answer cut short stays as far as it got). What
//! is typed during a turn is kept: lines ended with Enter are sent after it, the rest waits
//! at the prompt (Ctrl-C drops it). Ctrl-C at the prompt drops the line being typed; a
//! second one in a row leaves. SIGTERM and SIGHUP (and SIGINT while piped input is read) end the chat: every
//! server is shut down first, and the exit code is 128 + the signal's number.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use junction_host::server_log::ServerLog;
use junction_host::servers::StartFailure;
use junction_host::{display, Host};
use rustyline::error::ReadlineError;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::host_options::{report, HostOptions, Output};
use crate::signals::{Signals, Stop, TerminalModes};
use crate::terminal::editor::{self, ChatEditor};
use crate::terminal::escape::EscapeWatch;
use crate::terminal::{left_tasks, listing, Style, Terminal};

/// The arguments of `junction chat`.
#[derive(Debug, clap::Args)]
pub struct ChatArgs {
    #[command(flatten)]
    host: HostOptions,
    /// Show the model's answers as they are, without rendering their Markdown (it is
    /// rendered only when stdout is a terminal).
    #[arg(long)]
    no_markdown: bool,
}

const HELP: &[&str] = &[
    "Type a message for the model, or:",
    "  /server:prompt args   run a server's prompt (key=value or positional values)",
    "  @server:uri [text]    attach a resource as context (then send text, if any)",
    "  /tools                the tools the model can call",
    "  /prompts              the prompt commands",
    "  /resources            the resources to attach",
    "  /servers              the connected servers, and those that did not start",
    "  /restart NAME         start a server again (one that stopped or did not start)",
    "  /mcp                  each server's authorization (issuer, scopes, expiry) and state",
    "  /logs [N]             the last N (20) log messages of the servers",
    "  /roots [add DIR]      the roots each server is offered; add a directory to them",
    "  /tasks [collect|cancel|forget ID]  tool calls an earlier chat left running",
    "  /help                 this help",
    "  /quit                 leave",
];

/// What the person did at the prompt.
enum Input {
    /// Typed a line.
    Line(String),
    /// Pressed Ctrl-C (the line editor reads it as a key, not a signal).
    Interrupted,
}

/// The line editor and the read in flight.
struct Editing {
    /// The editor, when no thread is reading with it.
    editor: Option<Box<ChatEditor>>,
    /// The thread reading a line, which holds the editor until it is done. Kept here, so
    /// that a caller that stops waiting (a signal came first) finds the same read again.
    reading: Option<tokio::task::JoinHandle<(Box<ChatEditor>, rustyline::Result<String>)>>,
    /// The text typed while the last turn ran: its lines ended with Enter are the next
    /// lines, and the rest is what the line after them starts with.
    typed: String,
}

/// Where lines come from.
enum Lines {
    /// The line editor, on a terminal (lent to the reading thread while it reads); events
    /// shown while it reads go above its line.
    Editor(Editing, Output),
    /// Plain lines from piped stdin, echoed so the transcript shows them.
    Piped(Terminal),
}

impl Lines {
    /// The next line; `None` at the end of input. Cancel-safe for the editor: a read
    /// started and not waited for is waited for by the next call.
    async fn next(&mut self) -> Option<Input> {
        match self {
            Lines::Editor(editing, output) => {
                if editing.reading.is_none() {
                    // A line typed (and ended) during the last turn is sent as typed.
                    if let Some((line, rest)) = editing.typed.split_once('\n') {
                        let line = line.to_owned();
                        editing.typed = rest.to_owned();
                        println!("> {line}");
                        if let Some(editor) = editing.editor.as_mut() {
                            let _ = editor.add_history_entry(line.as_str());
                        }
                        return Some(Input::Line(line));
                    }
                    let mut taken = editing.editor.take()?;
                    let reading = output.clone();
                    let typed = std::mem::take(&mut editing.typed);
                    editing.reading = Some(tokio::task::spawn_blocking(move || {
                        reading.reading(true);
                        let line = taken.readline_with_initial("> ", (&typed, ""));
                        reading.reading(false);
                        (taken, line)
                    }));
                }
                let joined = editing.reading.as_mut()?.await;
                editing.reading = None;
                let (back, line) = joined.ok()?;
                let editor = editing.editor.insert(back);
                match line {
                    Ok(line) => {
                        let _ = editor.add_history_entry(line.as_str());
                        Some(Input::Line(line))
                    }
                    // Ctrl-C drops the line being typed, as shells do.
                    Err(ReadlineError::Interrupted) => Some(Input::Interrupted),
                    Err(_) => None,
                }
            }
            Lines::Piped(terminal) => {
                let terminal = terminal.clone();
                tokio::task::spawn_blocking(move || {
                    terminal.with(|io| {
                        let line = io.ask("> ")?;
                        io.say(&line);
                        Some(Input::Line(line))
                    })
                })
                .await
                .ok()?
            }
        }
    }

    /// Watches for Esc while a turn runs, when the line editor reads from a terminal.
    fn watch_escape(
        &self,
        terminal: &Terminal,
        interrupt: CancellationToken,
    ) -> Option<EscapeWatch> {
        match self {
            Lines::Editor(..) => Some(EscapeWatch::start(terminal, interrupt)),
            Lines::Piped(_) => None,
        }
    }

    /// Takes the text typed during a turn as the next lines (see [`Editing::typed`]).
    fn type_ahead(&mut self, typed: &str) {
        if let Lines::Editor(editing, _) = self {
            editing.typed.push_str(typed);
        }
    }
}

/// Runs the chat until `/quit`, the end of input or a signal.
pub async fn run(args: ChatArgs) -> ExitCode {
    let mut signals = match Signals::install() {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("junction chat: could not catch signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let modes = TerminalModes::save();
    let terminal = Terminal::stdio(Style::detect());
    let interactive = std::io::stdin().is_terminal();
    let answers = args.host.answers(interactive);
    let output = Output::default().markdown(!args.no_markdown && std::io::stdout().is_terminal());
    let started = tokio::select! {
        started = args.host.start(&terminal, answers, output.clone()) => started,
        // Servers still starting are killed with the future that starts them.
        stop = signals.recv() => return stopped(stop),
    };
    let (host, mut saving, mut failures) = match started {
        Ok(started) => (started.host, started.saving, started.failures),
        Err(e) => return report("chat", e),
    };
    let mut lines = vec![listing::summary(&host)];
    lines.extend(left_tasks::at_start(&host));
    if let Some(saving) = &saving {
        lines.push(format!(
            "conversation {} (go on with it later: --resume {0})",
            saving.id()
        ));
    }
    lines.push("Type a message, /help for commands, /quit to leave.".to_owned());
    terminal.say_all(&lines);
    let host = Arc::new(Mutex::new(host));
    let mut input = if interactive {
        match editor::editor(host.clone(), tokio::runtime::Handle::current()) {
            Ok(mut editor) => {
                match editor.create_external_printer() {
                    Ok(printer) => output.above(Box::new(printer)),
                    Err(e) => tracing::debug!("no printing above the prompt: {e}"),
                }
                let editing = Editing {
                    editor: Some(Box::new(editor)),
                    reading: None,
                    typed: String::new(),
                };
                Lines::Editor(editing, output.clone())
            }
            Err(e) => {
                eprintln!(
                    "junction chat: the line editor could not start ({e}); reading plain lines"
                );
                Lines::Piped(terminal.clone())
            }
        }
    } else {
        Lines::Piped(terminal.clone())
    };
    let mut interrupts = 0;
    let stop = loop {
        let next = tokio::select! {
            biased;
            // A Ctrl-C between a turn's end and the editor taking the terminal back (the
            // terminal still sends it as SIGINT) is a Ctrl-C at the prompt.
            stop = signals.recv() => match stop {
                Stop::Interrupt if interactive => Some(Input::Interrupted),
                other => break Some(other),
            },
            next = input.next() => next,
        };
        let line = match next {
            None => break None,
            Some(Input::Interrupted) => {
                interrupts += 1;
                if interrupts == 2 {
                    break None;
                }
                terminal.say_all(&["(Ctrl-C again to leave, or /quit)".to_owned()]);
                continue;
            }
            Some(Input::Line(line)) => line,
        };
        interrupts = 0;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line == "/quit" || line == "/exit" {
            break None;
        }
        let mut host = host.lock().await;
        let interrupt = host.interrupt_token();
        let escape = input.watch_escape(&terminal, interrupt.clone());
        let mut ctrl_c = false;
        let said = {
            let turn = handle(&mut host, &mut failures, line);
            tokio::pin!(turn);
            tokio::select! {
                biased;
                stop = signals.recv() => match stop {
                    // The turn winds down by itself once interrupted: calls cancelled, results in.
                    Stop::Interrupt => {
                        ctrl_c = true;
                        interrupt.cancel();
                        // A question being read would swallow the next line typed.
                        terminal.abandon_questions();
                        turn.await
                    }
                    other => break Some(other),
                },
                said = &mut turn => said,
            }
        };
        if let Some(escape) = escape {
            let typed = escape.finish();
            // Ctrl-C drops what was typed, as the terminal drops its pending input.
            if !ctrl_c {
                input.type_ahead(&typed);
            }
        }
        terminal.say_all(&said);
        if let Some(saving) = &mut saving {
            saving.save_or_warn(host.conversation(), &terminal);
        }
    };
    host.lock().await.shutdown().await;
    modes.restore();
    let Some(stop) = stop else {
        return ExitCode::SUCCESS;
    };
    say_stopped(stop);
    // The line editor's thread may still be reading; it must not keep the process alive.
    std::process::exit(i32::from(stop.code()))
}

fn say_stopped(stop: Stop) {
    eprintln!(
        "junction chat: stopped by {}; every server was shut down",
        stop.name()
    );
}

fn stopped(stop: Stop) -> ExitCode {
    say_stopped(stop);
    stop.exit_code()
}

/// Does what one line asks; returns what to say about it (the turn itself is rendered
/// from the host's events as it happens).
async fn handle(host: &mut Host, failures: &mut Vec<StartFailure>, line: &str) -> Vec<String> {
    let first = line.split_whitespace().next().unwrap_or_default();
    match first {
        "/restart" => {
            let Some(name) = line.split_whitespace().nth(1) else {
                return vec!["usage: /restart NAME (/servers lists them)".to_owned()];
            };
            return match host.restart(name).await {
                Ok(()) => {
                    failures.retain(|f| f.server != name);
                    vec![format!("restarted {}", display::name(name))]
                }
                Err(e) => vec![format!("error: {}", display::line(&e.to_string()))],
            };
        }
        "/help" => return HELP.iter().map(|l| (*l).to_owned()).collect(),
        "/tools" => return listing::tools(host),
        "/prompts" => return listing::prompts(host),
        "/resources" => return listing::resources(host),
        "/servers" => {
            host.check_servers().await;
            let mut lines = listing::servers(host);
            lines.extend(listing::failed_servers(failures));
            return lines;
        }
        "/mcp" => {
            host.check_servers().await;
            return listing::authorization(host);
        }
        "/logs" => return logs(line.split_whitespace().nth(1)),
        "/roots" => return roots(host, line["/roots".len()..].trim()),
        "/tasks" => return left_tasks::command(host, &line["/tasks".len()..]).await,
        _ => {}
    }
    if first.starts_with('/') {
        if !first.contains(':') {
            return vec![format!(
                "unknown command {}; /help lists the commands",
                display::line(first)
            )];
        }
        return match host.apply_prompt(line).await {
            Ok(added) => {
                let mut said = vec![format!(
                    "+ {} added {added} message{} to the conversation",
                    display::line(first),
                    if added == 1 { "" } else { "s" }
                )];
                said.extend(turn(host.run().await));
                said
            }
            Err(e) => vec![format!("error: {}", display::line(&e.to_string()))],
        };
    }
    if first.starts_with('@') {
        if let Err(e) = host.attach(first).await {
            return vec![format!("error: {}", display::line(&e.to_string()))];
        }
        let rest = line[first.len()..].trim();
        if rest.is_empty() {
            return Vec::new();
        }
        return turn(host.send(rest).await);
    }
    turn(host.send(line).await)
}

/// `/roots`: each server's roots; `/roots add DIR`: DIR joins them, and servers are told.
fn roots(host: &Host, rest: &str) -> Vec<String> {
    if let Some(dir) = rest.strip_prefix("add ") {
        let root = match junction_host::mediation::directory_root(std::path::Path::new(dir.trim()))
        {
            Ok(root) => root,
            Err(e) => return vec![format!("error: {}: {e}", display::line(dir.trim()))],
        };
        return match host.add_root(root.clone()) {
            Ok(told) if told.is_empty() => vec![format!(
                "{} is already offered (or no server takes roots)",
                display::line(&root.uri)
            )],
            Ok(told) => vec![format!(
                "{} added; told {}",
                display::line(&root.uri),
                told.iter()
                    .map(|s| display::name(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            )],
            Err(e) => vec![format!("error: {}", display::line(&e.to_string()))],
        };
    }
    if !rest.is_empty() {
        return vec!["usage: /roots, or /roots add DIR".to_owned()];
    }
    let mut lines = vec!["roots:".to_owned()];
    for server in host.servers().iter() {
        let roots = match server.roots() {
            None => "none (the roots capability is not declared to it)".to_owned(),
            Some(roots) => roots
                .iter()
                .map(|r| display::line(&r.uri))
                .collect::<Vec<_>>()
                .join(", "),
        };
        lines.push(format!("  {}: {roots}", display::name(&server.name)));
    }
    lines
}

/// `/logs [N]`: the end of the server log file.
fn logs(count: Option<&str>) -> Vec<String> {
    let count = match count.map(str::parse::<usize>) {
        None => 20,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => return vec!["usage: /logs [N] (N a positive number)".to_owned()],
    };
    let Some(log) = ServerLog::in_state_dir() else {
        return vec!["no server log: neither XDG_STATE_HOME nor HOME is set".to_owned()];
    };
    match log.tail(count) {
        Ok(lines) if lines.is_empty() => vec![format!(
            "no server log messages yet ({})",
            log.path().display()
        )],
        Ok(lines) => {
            let mut said = vec![format!(
                "server log ({}), last {}:",
                log.path().display(),
                lines.len()
            )];
            // Written sanitised, but the file may have been edited since.
            said.extend(lines.iter().map(|l| format!("  {}", display::line(l))));
            said
        }
        Err(e) => vec![format!(
            "error: could not read {}: {e}",
            log.path().display()
        )],
    }
}

fn turn(outcome: Result<junction_host::TurnOutcome, junction_host::HostError>) -> Vec<String> {
    match outcome {
        Ok(_) => Vec::new(),
        Err(e) => vec![format!(
            "error: the turn failed: {}",
            display::line(&e.to_string())
        )],
    }
}
