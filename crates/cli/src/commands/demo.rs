//! `junction demo`: the whole host, offline, in a few seconds.
//!
//! It starts `library`, `calendar` and `tasks` as child processes of this very binary
//! (`junction serve NAME --db .. --wire-log ..`, from the embedded `demo/servers.json`) with
//! their databases and wire logs in a fresh directory, lists what they offer, then plays a
//! conversation through the real agent loop with the scripted model of `demo/script.json`:
//! the user's first message holds a secret; the model searches the library, fails to check
//! out a book with no copies and retries with another, finds the dentist appointment, adds
//! an event with a bad date and fixes it, and asks to delete a task, which the demo's user
//! visibly refuses. A prompt command and an attached resource show the other primitives, and
//! the library's inventory report runs as a task (its status shown as it counts).
//!
//! Then it checks, from the servers' wire logs and the servers themselves, what the
//! specification promises (see [`checks`]) and prints each check as PASS or FAIL. Exits 0
//! when every check passes, 1 otherwise.

mod checks;
mod consent;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use junction::client::Negotiation;
use junction_host::config::Config;
use junction_host::servers::StartOptions;
use junction_host::Host;
use junction_servers::date::Date;

use super::host_options::{server_log, stdout_sink};
use crate::terminal::interaction::TerminalInteraction;
use crate::terminal::style::Paint;
use crate::terminal::{listing, Answers, Style, Terminal};
use consent::DemoConsent;

/// The servers, with `${JUNCTION_DEMO_EXE}` and `${JUNCTION_DEMO_DIR}` to fill in.
const SERVERS: &str = include_str!("demo/servers.json");
/// The model's turns; `{{day+N}}` stands for the date N days from today.
const SCRIPT: &str = include_str!("demo/script.json");
/// The secret sentence's secret: no server may ever see it.
pub const SECRET: &str = "4711-SECRET";

/// What the person does, in order.
enum Step {
    /// Attach a resource (`@server:uri`).
    Attach(&'static str),
    /// Send a message.
    Say(&'static str),
    /// Run a prompt command (`/server:prompt args`), then let the model answer.
    Command(&'static str),
}

const STEPS: &[Step] = &[
    Step::Attach("@library:library://policy"),
    Step::Say(
        "My locker code is 4711-SECRET; never share it. I'm studying science this month: \
         find me a science book and check it out, tell me when my dentist appointment is, \
         put a study session on my calendar for tomorrow from 18:00 to 19:30, and tidy up \
         my to-do list.",
    ),
    Step::Command("/library:reading_list subject=science"),
    Step::Say("How does the library's science shelf stand?"),
];

/// The arguments of `junction demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Keep the databases and wire logs in DIR (created if needed) instead of a temporary
    /// directory removed at the end. The demo's files from an earlier run there
    /// (`NAME.db`, `NAME.wire.jsonl`) are replaced.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The protocol revision the host speaks with the servers: `auto` (the default: 2026-07-28
    /// when a server has it, else the handshake) or a revision.
    #[arg(long, value_name = "VERSION", default_value = "auto",
          value_parser = clap::builder::PossibleValuesParser::new(Negotiation::names()))]
    protocol_version: String,
}

/// Where the demo's files live; a temporary directory is removed when dropped.
struct WorkDir {
    path: PathBuf,
    temporary: bool,
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

impl WorkDir {
    fn new(dir: Option<PathBuf>) -> std::io::Result<WorkDir> {
        let (path, temporary) = match dir {
            Some(dir) => (dir, false),
            None => {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.subsec_nanos())
                    .unwrap_or_default();
                let name = format!("junction-demo-{}-{nanos}", std::process::id());
                (std::env::temp_dir().join(name), true)
            }
        };
        std::fs::create_dir_all(&path)?;
        if !temporary {
            // A kept directory from an earlier run must not lend its data to this one.
            for server in checks::SERVERS {
                for file in [format!("{server}.db"), checks::wire_log_name(server)] {
                    match std::fs::remove_file(path.join(file)) {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                        _ => {}
                    }
                }
            }
        }
        Ok(WorkDir { path, temporary })
    }
}

/// The embedded script with its dates filled in.
fn script(today: Date) -> String {
    let mut text = SCRIPT.to_owned();
    for days in 0..=14 {
        text = text.replace(
            &format!("{{{{day+{days}}}}}"),
            &today.plus_days(days).to_string(),
        );
    }
    text
}

/// The embedded config with this binary and `dir` filled in.
fn config(exe: &Path, dir: &Path) -> anyhow::Result<Config> {
    let (exe, dir) = (exe.display().to_string(), dir.display().to_string());
    Ok(Config::parse(
        SERVERS,
        Path::new("demo/servers.json"),
        &|name| match name {
            "JUNCTION_DEMO_EXE" => Some(exe.clone()),
            "JUNCTION_DEMO_DIR" => Some(dir.clone()),
            _ => None,
        },
    )?)
}

/// Runs the demo and its checks.
pub async fn run(args: DemoArgs) -> ExitCode {
    match demo(args).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("junction demo: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn demo(args: DemoArgs) -> anyhow::Result<bool> {
    use anyhow::Context as _;
    let style = Style::detect();
    let terminal = Terminal::stdio(style);
    let heading = |text: &str| {
        terminal.say_all(&[
            String::new(),
            style.paint(Paint::Bold, &format!("== {text} ==")),
        ])
    };
    let work = WorkDir::new(args.dir).context("could not create the demo's directory")?;
    let exe = std::env::current_exe().context("could not find this program's own path")?;
    let config = config(&exe, &work.path)?;
    let script = script(Date::today());
    let model = Arc::new(
        junction_host::model::ScriptedModel::from_json(&script)
            .context("the embedded model script is not valid")?,
    );

    heading("junction demo: three servers, one host, a scripted model (offline)");
    terminal.say_all(&[
        format!(
            "data and wire logs in {}{}",
            work.path.display(),
            if work.temporary {
                " (removed at the end)"
            } else {
                ""
            }
        ),
        "policy: servers trusted (read-only tools run), library checkout and calendar \
         add_event allowed, everything else asks; you are played by the demo"
            .to_owned(),
    ]);
    let consent = Arc::new(DemoConsent::new(style));
    let interaction = Arc::new(TerminalInteraction::new(terminal.clone(), Answers::No));
    let negotiation: Negotiation = args
        .protocol_version
        .parse()
        .map_err(|e| anyhow::anyhow!("--protocol-version: {e}"))?;
    let mut start = StartOptions::default();
    start.client = start.client.negotiation(negotiation);
    let (mut host, failures) = Host::from_config(
        &config,
        &start,
        model,
        consent,
        interaction,
        stdout_sink(style, Default::default(), server_log(&config)),
    )
    .await?;

    heading("what the host offers");
    let mut lines = listing::tools(&host);
    lines.extend(listing::prompts(&host));
    lines.extend(listing::resources(&host));
    terminal.say_all(&lines);
    let script_check = checks::script_matches_tools(&script, &host.tool_names());

    heading("the conversation");
    for step in STEPS {
        play(&mut host, &terminal, step).await;
    }

    heading("checks");
    let kept = checks::record_kept(&host, "tasks", "tasks://15", "Clean out the garage").await;
    let conversation = host.conversation().messages().to_vec();
    host.shutdown().await;
    let mut results = vec![checks::started(&failures), script_check];
    results.extend(checks::after_run(&work.path, &conversation, kept));
    let mut passed = true;
    let mut lines = Vec::new();
    for check in &results {
        passed &= check.passed;
        lines.push(check.line(style));
    }
    lines.push(String::new());
    lines.push(if passed {
        style.paint(
            Paint::Green,
            &format!("all {} checks passed", results.len()),
        )
    } else {
        style.paint(
            Paint::Red,
            &format!(
                "{} of {} checks failed",
                results.iter().filter(|c| !c.passed).count(),
                results.len()
            ),
        )
    });
    terminal.say_all(&lines);
    Ok(passed)
}

/// Plays one step; the model's turn is rendered from the host's events as it happens.
async fn play(host: &mut Host, terminal: &Terminal, step: &Step) {
    let style = terminal.style();
    let you = |text: &str| {
        terminal.say_all(&[
            String::new(),
            format!("{} {text}", style.paint(Paint::Bold, "you:")),
        ])
    };
    let outcome = match step {
        Step::Attach(reference) => {
            you(reference);
            host.attach(reference).await.map(|()| None)
        }
        Step::Say(text) => {
            you(text);
            host.send(*text).await.map(Some)
        }
        Step::Command(line) => {
            you(line);
            match host.apply_prompt(line).await {
                Ok(added) => {
                    terminal.say_all(&[format!(
                        "+ {line} added {added} message{} to the conversation",
                        if added == 1 { "" } else { "s" }
                    )]);
                    host.run().await.map(Some)
                }
                Err(e) => Err(e),
            }
        }
    };
    if let Err(e) = outcome {
        terminal.say_all(&[style.paint(Paint::Red, &format!("error: {e}"))]);
    }
}
