//! The options `junction chat` and `junction run` share, and starting a host from them:
//! which config (given, else `./.mcp.json`, else none), which model, where "always allow"
//! answers are kept, who answers the host's questions, and which saved conversation (if
//! any) goes on.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context as _;
use junction_host::config::approval::{default_approvals_file, Approvals};
use junction_host::config::{scopes, Config, ConfigError, Scope, ServerConfig, TransportConfig};
use junction_host::conversation::Conversation;
use junction_host::events::{Event, EventSink};
use junction_host::mediation::directory_root;
use junction_host::model::{AnthropicModel, Model, OpenAiModel, ScriptedModel};
use junction_host::policy::{default_consent_file, default_pins_file, Action, Rule};
use junction_host::saved::{ConversationStore, SavedConversation, SavedError};
use junction_host::server_log::ServerLog;
use junction_host::servers::{StartFailure, StartOptions};
use junction_host::tasks_left::{default_tasks_file, TaskLedger};
use junction_host::{display, Host};
use junction_protocol::logging::LoggingLevel;
use junction_protocol::roots::Root;

use crate::terminal::consent::TerminalConsent;
use crate::terminal::events::Renderer;
use crate::terminal::interaction::TerminalInteraction;
use crate::terminal::spinner::Spinner;
use crate::terminal::{Answers, Style, Terminal};

/// The config file looked for when `--config` is not given.
pub const DEFAULT_CONFIG: &str = ".mcp.json";

/// The kinds of `--model`, as said in errors.
const MODEL_KINDS: &str = "anthropic:MODEL (key in ANTHROPIC_API_KEY), openai:MODEL (key in \
OPENAI_API_KEY, or a local server at OPENAI_BASE_URL) or scripted:FILE (a JSON script of the \
model's turns)";

/// Options shared by `chat` and `run`.
#[derive(Debug, Clone, clap::Args)]
pub struct HostOptions {
    /// The servers: a Claude Desktop, `.mcp.json` or VS Code config file [default: ./.mcp.json].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The model: `anthropic:MODEL` (Messages API; ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL),
    /// `openai:MODEL` (Chat Completions, also Ollama / llama.cpp / vLLM; OPENAI_API_KEY,
    /// OPENAI_BASE_URL), or `scripted:FILE` (plays the turns of a JSON script).
    #[arg(long, value_name = "PROVIDER:SPEC")]
    pub model: Option<String>,
    /// The most tokens the model may write per answer [default: 4096 for anthropic; the
    /// server's own limit for openai]. Sampling requests bring their own limit.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tokens: Option<u64>,
    /// The host's own system prompt (overrides the config's `junction.systemPrompt`); the
    /// servers' instructions still follow it, each labelled with its server.
    #[arg(long, value_name = "TEXT")]
    pub system: Option<String>,
    /// Where "always allow" answers are kept (overrides the config's `junction.consentFile`)
    /// [default: $XDG_CONFIG_HOME/junction/consent.json].
    #[arg(long, value_name = "FILE")]
    pub consent_file: Option<PathBuf>,
    /// How long a tool call may go without an answer or progress before it is cancelled
    /// (overrides the config's `junction.toolTimeoutMs`; a server's own `toolTimeoutMs`
    /// still wins) [default: 600000, ten minutes].
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub tool_timeout_ms: Option<u64>,
    /// The least severe log message servers are asked to send: debug, info, notice,
    /// warning, error, critical, alert or emergency (overrides the config's
    /// `junction.logLevel`) [default: warning].
    #[arg(long, value_name = "LEVEL", value_parser = log_level)]
    pub log_level: Option<LoggingLevel>,
    /// A directory offered to servers as a root, besides the working directory
    /// (repeatable; a server's own `roots` in the config replace these).
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// Offers servers no roots but those their config entries give (not even the working
    /// directory).
    #[arg(long, conflicts_with = "roots")]
    pub no_roots: bool,
    /// Allow calls of tools matching this glob over `server__tool` without asking, for this
    /// run (repeatable; the same globs as `junction.policy`).
    #[arg(long, value_name = "PATTERN")]
    pub allow: Vec<String>,
    /// Deny calls of tools matching this glob, for this run (repeatable; a deny always wins).
    #[arg(long, value_name = "PATTERN")]
    pub deny: Vec<String>,
    /// Answer every question without asking: allow tool calls once (not those of a tool
    /// whose definition changed since it was allowed), let sampling through.
    #[arg(long, conflicts_with = "no")]
    pub yes: bool,
    /// Answer every question without asking: deny (the default when nobody can be asked).
    #[arg(long)]
    pub no: bool,
    /// Go on with the conversation saved last in this directory.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_last: bool,
    /// Go on with the saved conversation ID.
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// Do not save this conversation (by default each is saved under
    /// $XDG_DATA_HOME/junction/conversations/).
    #[arg(long)]
    pub no_save: bool,
}

/// A host ready to go, with what did not start and where its conversation is kept.
pub struct Started {
    /// The host, holding the resumed conversation if one was asked for.
    pub host: Host,
    /// The servers that did not start.
    pub failures: Vec<StartFailure>,
    /// Where the conversation is saved; `None` with `--no-save`.
    pub saving: Option<Saving>,
}

/// Where one session's conversation is saved.
pub struct Saving {
    store: ConversationStore,
    saved: SavedConversation,
}

impl Saving {
    /// The conversation's id, for `--resume`.
    pub fn id(&self) -> &str {
        &self.saved.id
    }

    /// Saves `conversation` (once it holds anything: empty sessions leave no file).
    pub fn save(&mut self, conversation: &Conversation) -> Result<(), SavedError> {
        if conversation.messages().is_empty() {
            return Ok(());
        }
        self.saved.conversation = conversation.clone();
        self.store.save(&mut self.saved)
    }

    /// Saves, saying on `terminal` when it failed (the session goes on regardless).
    pub fn save_or_warn(&mut self, conversation: &Conversation, terminal: &Terminal) {
        if let Err(e) = self.save(conversation) {
            terminal.say_all(&[format!(
                "warning: the conversation was not saved: {}",
                display::line(&e.to_string())
            )]);
        }
    }
}

/// Why a host could not be set up, and so how the command exits.
#[derive(Debug)]
pub enum SetupError {
    /// The command line is incomplete or wrong (exit 2).
    Usage(anyhow::Error),
    /// A file could not be used (exit 1).
    Failed(anyhow::Error),
}

impl HostOptions {
    /// Who answers: the flags, else `interactive` decides between asking and denying.
    pub fn answers(&self, interactive: bool) -> Answers {
        if self.yes {
            Answers::Yes
        } else if self.no || !interactive {
            Answers::No
        } else {
            Answers::Ask
        }
    }

    /// The model `--model` names, else the config's `junction.model`.
    pub fn model(&self, config: &Config) -> Result<Arc<dyn Model>, SetupError> {
        let Some(spec) = self.model.as_ref().or(config.model.as_ref()) else {
            return Err(usage(format!(
                "no model: pass --model {MODEL_KINDS}, or set `junction.model` in the config"
            )));
        };
        let Some((kind, rest)) = spec.split_once(':').filter(|(_, rest)| !rest.is_empty()) else {
            return Err(usage(format!(
                "the model {spec:?} is not PROVIDER:SPEC; use {MODEL_KINDS}"
            )));
        };
        let model: Arc<dyn Model> = match kind {
            "anthropic" => {
                let mut model = AnthropicModel::from_env(rest).map_err(provider_setup)?;
                if let Some(n) = self.max_tokens {
                    model = model.max_tokens(n);
                }
                Arc::new(model)
            }
            "openai" => {
                let mut model = OpenAiModel::from_env(rest).map_err(provider_setup)?;
                if let Some(n) = self.max_tokens {
                    model = model.max_tokens(n);
                }
                Arc::new(model)
            }
            "scripted" => {
                let text = std::fs::read_to_string(rest)
                    .with_context(|| format!("could not read the model script {rest}"))
                    .map_err(SetupError::Failed)?;
                let model = ScriptedModel::from_json(&text)
                    .with_context(|| format!("the model script {rest} is not valid"))
                    .map_err(SetupError::Failed)?;
                Arc::new(model)
            }
            other => {
                return Err(usage(format!(
                    "unknown model provider {other:?} in {spec:?}; use {MODEL_KINDS}"
                )))
            }
        };
        Ok(model)
    }

    /// The working directory and every `--root`, as roots (none with `--no-roots`).
    fn default_roots(&self) -> Result<Vec<Root>, SetupError> {
        if self.no_roots {
            return Ok(Vec::new());
        }
        let mut roots = match std::env::current_dir().and_then(|d| directory_root(&d)) {
            Ok(root) => vec![root],
            Err(e) => {
                eprintln!("warning: the working directory is not offered as a root: {e}");
                Vec::new()
            }
        };
        for dir in &self.roots {
            let root =
                directory_root(dir).map_err(|e| usage(format!("--root {}: {e}", dir.display())))?;
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
        Ok(roots)
    }

    /// The conversation to go on with (`--continue`, `--resume`) or a new one, and where it
    /// is saved; read before any server starts, so that a wrong id costs nothing.
    fn conversation(
        &self,
        terminal: &Terminal,
        model: &str,
    ) -> Result<(Option<Saving>, Conversation), SetupError> {
        let resuming = self.continue_last || self.resume.is_some();
        if self.no_save && !resuming {
            return Ok((None, Conversation::new()));
        }
        let failed = |e: SavedError| SetupError::Failed(e.into());
        let store = ConversationStore::in_data_dir().map_err(failed)?;
        let directory = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let model = model.to_owned();
        let saved = if let Some(id) = &self.resume {
            store.load(id).map_err(failed)?
        } else if self.continue_last {
            store
                .latest(Some(&directory))
                .map_err(failed)?
                .ok_or_else(|| {
                    SetupError::Failed(anyhow::anyhow!(
                        "no saved conversation to continue in {directory} (looked in {})",
                        store.dir().display()
                    ))
                })?
        } else {
            SavedConversation::start(directory, model.clone())
        };
        let conversation = saved.conversation.clone();
        if resuming {
            terminal.say_all(&[format!(
                "resumed conversation {} ({} messages)",
                saved.id,
                conversation.messages().len()
            )]);
        }
        if self.no_save {
            return Ok((None, conversation));
        }
        let mut saved = saved;
        saved.model = model;
        Ok((Some(Saving { store, saved }), conversation))
    }

    /// Reads the config (saying which files, or that there are none) and applies the flags:
    /// `--config FILE` alone, else the user and project files ([`scopes`]), the servers of
    /// a project file only once approved (asked about when `answers` may ask).
    pub fn config(&self, terminal: &Terminal, answers: Answers) -> Result<Config, SetupError> {
        let failed = |e: ConfigError| SetupError::Failed(e.into());
        let inputs = Inputs::default();
        let env = |name: &str| inputs.lookup(name, terminal, answers);
        let mut config = match &self.config {
            Some(path) => {
                terminal.say_all(&[format!("config: {}", path.display())]);
                Config::load_with(path, &env).map_err(failed)?
            }
            None => {
                let files = discovered();
                if files.is_empty() {
                    terminal.say_all(&[format!(
                        "no servers are configured: pass --config FILE, create ./{DEFAULT_CONFIG} or add one with `junction mcp add`"
                    )]);
                }
                let mut layers = Vec::new();
                for (scope, path) in files {
                    terminal.say_all(&[format!("config: {} ({scope})", path.display())]);
                    let mut layer = Config::load_with(&path, &env)
                        .map_err(failed)?
                        .in_scope(scope);
                    if scope == Scope::Project {
                        layer.restrict_to_project(&path);
                        approve_project(&mut layer, terminal, answers)?;
                    }
                    layers.push(layer);
                }
                let (config, notes) = scopes::merge(layers);
                let notes: Vec<String> = notes
                    .iter()
                    .map(|n| format!("note: {}", display::line(n)))
                    .collect();
                terminal.say_all(&notes);
                config
            }
        };
        let warnings: Vec<String> = std::mem::take(&mut config.warnings)
            .iter()
            .map(|w| format!("warning: {}", display::line(w)))
            .collect();
        terminal.say_all(&warnings);
        if let Some(file) = &self.consent_file {
            config.policy.consent_file = Some(file.clone());
        }
        if config.policy.consent_file.is_none() {
            config.policy.consent_file = default_consent_file();
        }
        config.policy.pins_file = default_pins_file();
        for (patterns, action) in [(&self.allow, Action::Allow), (&self.deny, Action::Deny)] {
            config
                .policy
                .rules
                .extend(patterns.iter().map(|p| Rule::new(p.clone(), action)));
        }
        if let Some(system) = &self.system {
            config.system_prompt = Some(system.clone());
        }
        if let Some(level) = self.log_level {
            config.log_level = Some(level);
        }
        if let Some(ms) = self.tool_timeout_ms {
            config.tool_timeout = Some(std::time::Duration::from_millis(ms));
        }
        Ok(config)
    }

    /// Starts the configured servers and the host; events are rendered on stdout, as
    /// Markdown when `output` says so and the config's `junction.markdown` is not `false`.
    /// Servers that fail are reported (by their events) and returned; the host goes on
    /// without them.
    pub async fn start(
        &self,
        terminal: &Terminal,
        answers: Answers,
        output: Output,
    ) -> Result<Started, SetupError> {
        let config = self.config(terminal, answers)?;
        let markdown = output.markdown && config.markdown != Some(false);
        let events = stdout_sink(
            terminal.style(),
            output.markdown(markdown),
            server_log(&config),
        );
        self.start_from(config, terminal, answers, events).await
    }

    /// [`HostOptions::start`] with the host's events going to the sink `events` makes,
    /// given the server log file the config asks for.
    pub async fn start_with(
        &self,
        terminal: &Terminal,
        answers: Answers,
        events: impl FnOnce(Option<ServerLog>) -> EventSink,
    ) -> Result<Started, SetupError> {
        let config = self.config(terminal, answers)?;
        let events = events(server_log(&config));
        self.start_from(config, terminal, answers, events).await
    }

    /// Starts the servers of `config` and the host, its events going to `events`.
    async fn start_from(
        &self,
        config: Config,
        terminal: &Terminal,
        answers: Answers,
        events: EventSink,
    ) -> Result<Started, SetupError> {
        let model = self.model(&config)?;
        let spec = self.model.as_ref().or(config.model.as_ref());
        let (saving, conversation) =
            self.conversation(terminal, spec.map_or("", String::as_str))?;
        match answers {
            Answers::Ask => {}
            Answers::Yes => terminal.say_all(&[
                "not asking: tool calls are allowed once and sampling goes through (--yes)".to_owned(),
            ]),
            Answers::No => terminal.say_all(&[
                "not asking: calls that need consent, sampling and questions are denied (--yes allows calls)"
                    .to_owned(),
            ]),
        }
        let consent = Arc::new(TerminalConsent::new(terminal.clone(), answers));
        let interaction = Arc::new(TerminalInteraction::new(terminal.clone(), answers));
        let (mut host, failures) = Host::from_config(
            &config,
            &StartOptions::default().roots(self.default_roots()?),
            model,
            consent,
            interaction,
            events,
        )
        .await
        .map_err(|e| SetupError::Failed(e.into()))?;
        host.set_conversation(conversation);
        if let Some(file) = default_tasks_file() {
            host = host.with_task_ledger(TaskLedger::in_file(file));
        }
        Ok(Started {
            host,
            failures,
            saving,
        })
    }
}

/// The values of VS Code inputs (`${input:ID}`, looked up as `JUNCTION_INPUT_ID`) given
/// for this run: from the environment, else asked once on the terminal (unless `--no`),
/// without echo (they are often keys), and kept only in memory.
#[derive(Default)]
struct Inputs(std::cell::RefCell<std::collections::HashMap<String, Option<String>>>);

impl Inputs {
    /// The value of variable `name`.
    fn lookup(&self, name: &str, terminal: &Terminal, answers: Answers) -> Option<String> {
        if let Ok(value) = std::env::var(name) {
            return Some(value);
        }
        let id = name.strip_prefix("JUNCTION_INPUT_")?;
        // `--yes` answers consent, not this; `--no` and a run without a terminal ask nothing.
        if answers == Answers::No || !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            return None;
        }
        self.0
            .borrow_mut()
            .entry(name.to_owned())
            .or_insert_with(|| {
                terminal.with(|io| {
                    io.ask_secret(&format!(
                        "value of input {} for the config (not shown; set {} to skip this): ",
                        display::name(id),
                        display::name(name)
                    ))
                })
            })
            .clone()
    }
}

/// The config files found from the working directory, lowest precedence first: the user's,
/// then the project's (see [`scopes`]).
pub fn discovered() -> Vec<(Scope, PathBuf)> {
    let mut files: Vec<(Scope, PathBuf)> = scopes::user_config_file()
        .map(|f| (Scope::User, f))
        .into_iter()
        .collect();
    if let Ok(cwd) = std::env::current_dir() {
        let root = scopes::project_root(&cwd);
        files.extend(
            scopes::project_files(&root)
                .into_iter()
                .map(|f| (Scope::Project, relative_to(&cwd, f))),
        );
    }
    files.retain(|(_, f)| f.is_file());
    files
}

/// `path` relative to `dir` when it is inside it, for shorter messages.
fn relative_to(dir: &Path, path: PathBuf) -> PathBuf {
    path.strip_prefix(dir).map(Path::to_owned).unwrap_or(path)
}

/// What a server entry runs or reaches, in one line.
pub fn target(server: &ServerConfig) -> String {
    match &server.transport {
        TransportConfig::Stdio(stdio) => std::iter::once(&stdio.command)
            .chain(&stdio.args)
            .map(|a| display::line(a))
            .collect::<Vec<_>>()
            .join(" "),
        TransportConfig::Http(http) => display::line(&http.url),
    }
}

/// Keeps the servers of project file `layer` that were approved, or that the person
/// approves now; the others are left out, saying so. Approvals are remembered only when
/// asked for ("always"), like consent answers.
fn approve_project(
    layer: &mut Config,
    terminal: &Terminal,
    answers: Answers,
) -> Result<(), SetupError> {
    let file = default_approvals_file();
    let mut approvals = match &file {
        Some(file) => Some(Approvals::load(file).map_err(|e| SetupError::Failed(e.into()))?),
        None => None,
    };
    let mut kept = Vec::new();
    for server in std::mem::take(&mut layer.servers) {
        let approved =
            server.disabled || approvals.as_ref().is_some_and(|a| a.is_approved(&server));
        if approved {
            kept.push(server);
            continue;
        }
        let name = display::name(&server.name);
        let source = server.source.display().to_string();
        let answer = match answers {
            Answers::Ask => terminal.with(|io| {
                io.say(&format!(
                    "project file {source} defines server {name}, which runs: {}",
                    target(&server)
                ));
                io.ask(&format!(
                    "start {name}? [y]es this time, [a]lways (remembered for this entry), [n]o: "
                ))
            }),
            Answers::Yes | Answers::No => None,
        };
        match answer.as_deref().map(str::trim) {
            Some("y" | "yes") => kept.push(server),
            Some("a" | "always") => {
                if let Some(approvals) = approvals.as_mut() {
                    if let Err(e) = approvals.approve(&server) {
                        terminal.say_all(&[format!(
                            "warning: the approval was not kept: {}",
                            display::line(&e.to_string())
                        )]);
                    }
                }
                kept.push(server);
            }
            _ if answers == Answers::Ask => {
                terminal.say_all(&[format!("skipped server {name} of project file {source}")]);
            }
            _ => terminal.say_all(&[format!(
                "skipped server {name} of project file {source}: it is not approved (approve it in `junction chat` on a terminal, or pass --config {source} to use the file as it is)"
            )]),
        }
    }
    layer.servers = kept;
    Ok(())
}

fn usage(message: String) -> SetupError {
    SetupError::Usage(anyhow::anyhow!(message))
}

/// A provider that cannot be set up (no key, a bad base URL) is a usage error.
fn provider_setup(error: junction_host::model::ModelError) -> SetupError {
    SetupError::Usage(error.into())
}

/// A sink that renders each event on stdout, streamed text as it arrives, with a spinner
/// while the model thinks when stdout is a terminal. It writes to stdout directly rather
/// than through the [`Terminal`], so that a server's log line never waits on a question the
/// person has not answered yet.
fn log_level(text: &str) -> Result<LoggingLevel, String> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).map_err(|_| {
        "expected debug, info, notice, warning, error, critical, alert or emergency".to_owned()
    })
}

/// The server log file in the user's state directory, set aside past the config's
/// `junction.maxServerLog` bytes (8 MiB by default); `None` without a state directory.
pub fn server_log(config: &Config) -> Option<ServerLog> {
    let log = ServerLog::in_state_dir()?;
    Some(match config.max_server_log {
        Some(bytes) => log.max_bytes(u64::try_from(bytes).unwrap_or(u64::MAX)),
        None => log,
    })
}

/// Keeps a server's log message in the server log file `log`; the first failure is said
/// once on stderr, the others are not.
pub fn keep_log(log: Option<&ServerLog>, event: &Event) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let Event::LogLine {
        server,
        level,
        logger,
        data,
    } = event
    else {
        return;
    };
    let Some(log) = log else {
        return;
    };
    if let Err(e) = log.append(server, level, logger.as_deref(), data) {
        if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
            eprintln!(
                "warning: server log messages are not kept: {}: {e}",
                log.path().display()
            );
        }
    }
}

/// Where the chat's events are written: stdout, or, while the line editor reads a line,
/// above that line through the editor (which draws the prompt and what was typed again
/// below it).
#[derive(Clone, Default)]
pub struct Output {
    printer: Arc<Mutex<Option<Box<dyn rustyline::ExternalPrinter + Send>>>>,
    reading: Arc<std::sync::atomic::AtomicBool>,
    markdown: bool,
}

impl Output {
    /// Renders the model's answers as Markdown (`on`), or shows them as they are.
    pub fn markdown(mut self, on: bool) -> Self {
        self.markdown = on;
        self
    }

    /// Prints above the editor's line from now on, while it reads.
    pub fn above(&self, printer: Box<dyn rustyline::ExternalPrinter + Send>) {
        *self.printer.lock().unwrap_or_else(PoisonError::into_inner) = Some(printer);
    }

    /// Says whether the editor is reading a line now.
    pub fn reading(&self, reading: bool) {
        self.reading
            .store(reading, std::sync::atomic::Ordering::SeqCst);
    }

    fn write(&self, text: &str) {
        use std::io::Write;
        if self.reading.load(std::sync::atomic::Ordering::SeqCst) {
            let mut printer = self.printer.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(printer) = printer.as_mut() {
                if printer.print(text.to_owned()).is_ok() {
                    return;
                }
            }
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}

pub fn stdout_sink(style: Style, output: Output, log: Option<ServerLog>) -> EventSink {
    use std::io::IsTerminal;
    let renderer = Renderer::new(style);
    let renderer = Mutex::new(if output.markdown {
        renderer.with_markdown()
    } else {
        renderer
    });
    let spinner = std::io::stdout().is_terminal().then(Spinner::start);
    EventSink::callback(move |event| {
        keep_log(log.as_ref(), &event);
        let text = renderer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .output(&event);
        if let Some(spinner) = &spinner {
            // The spinner's line is wiped before anything else is written.
            spinner.set(matches!(event, Event::Thinking));
        }
        if text.is_empty() {
            return;
        }
        output.write(&text);
    })
}

pub fn report(command: &str, error: SetupError) -> std::process::ExitCode {
    match error {
        SetupError::Usage(e) => {
            eprintln!("junction {command}: {}", display::text(&format!("{e:#}")));
            std::process::ExitCode::from(2)
        }
        SetupError::Failed(e) => {
            eprintln!("junction {command}: {}", display::text(&format!("{e:#}")));
            std::process::ExitCode::FAILURE
        }
    }
}
