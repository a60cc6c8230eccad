//! The options `junction chat` and `junction run` share, and starting a host from them:
//! which config (given, else `./.mcp.json`, else none), which model, where "always allow"
//! answers are kept, and who answers the host's questions.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context as _;
use junction_host::config::Config;
use junction_host::events::EventSink;
use junction_host::model::{AnthropicModel, Model, OpenAiModel, ScriptedModel};
use junction_host::policy::{Action, Rule};
use junction_host::servers::{StartFailure, StartOptions};
use junction_host::{display, Host};

use crate::terminal::consent::TerminalConsent;
use crate::terminal::events::Renderer;
use crate::terminal::interaction::TerminalInteraction;
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
    /// Where "always allow" answers are kept (overrides the config's `junction.consentFile`).
    #[arg(long, value_name = "FILE")]
    pub consent_file: Option<PathBuf>,
    /// How long a tool call may go without an answer or progress before it is cancelled
    /// (overrides the config's `junction.toolTimeoutMs`; a server's own `toolTimeoutMs`
    /// still wins) [default: 600000, ten minutes].
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub tool_timeout_ms: Option<u64>,
    /// Allow calls of tools matching this glob over `server__tool` without asking, for this
    /// run (repeatable; the same globs as `junction.policy`).
    #[arg(long, value_name = "PATTERN")]
    pub allow: Vec<String>,
    /// Deny calls of tools matching this glob, for this run (repeatable; a deny always wins).
    #[arg(long, value_name = "PATTERN")]
    pub deny: Vec<String>,
    /// Answer every question without asking: allow tool calls once, let sampling through.
    #[arg(long, conflicts_with = "no")]
    pub yes: bool,
    /// Answer every question without asking: deny (the default when nobody can be asked).
    #[arg(long)]
    pub no: bool,
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

    /// The model the options name.
    pub fn model(&self) -> Result<Arc<dyn Model>, SetupError> {
        let Some(spec) = &self.model else {
            return Err(usage(format!("no model: pass --model {MODEL_KINDS}")));
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

    /// The config file to use, if any: `--config`, else `./.mcp.json` when it exists.
    pub fn config_path(&self) -> Option<PathBuf> {
        match &self.config {
            Some(path) => Some(path.clone()),
            None => Path::new(DEFAULT_CONFIG)
                .is_file()
                .then(|| PathBuf::from(DEFAULT_CONFIG)),
        }
    }

    /// Reads the config (saying which, or that there is none) and applies `--consent-file`.
    pub fn config(&self, terminal: &Terminal) -> Result<Config, SetupError> {
        let mut config = match self.config_path() {
            Some(path) => {
                terminal.say_all(&[format!("config: {}", path.display())]);
                let config = Config::load(&path).map_err(|e| SetupError::Failed(e.into()))?;
                let warnings: Vec<String> = config
                    .warnings
                    .iter()
                    .map(|w| format!("warning: {}", display::line(w)))
                    .collect();
                terminal.say_all(&warnings);
                config
            }
            None => {
                terminal.say_all(&[format!(
                    "no servers are configured: pass --config FILE or create ./{DEFAULT_CONFIG}"
                )]);
                Config::default()
            }
        };
        if let Some(file) = &self.consent_file {
            config.policy.consent_file = Some(file.clone());
        }
        for (patterns, action) in [(&self.allow, Action::Allow), (&self.deny, Action::Deny)] {
            config
                .policy
                .rules
                .extend(patterns.iter().map(|p| Rule::new(p.clone(), action)));
        }
        if let Some(ms) = self.tool_timeout_ms {
            config.tool_timeout = Some(std::time::Duration::from_millis(ms));
        }
        Ok(config)
    }

    /// Starts the configured servers and the host; events are rendered on stdout. Servers
    /// that fail are reported (by their events) and returned; the host goes on without them.
    pub async fn start(
        &self,
        terminal: &Terminal,
        answers: Answers,
    ) -> Result<(Host, Vec<StartFailure>), SetupError> {
        self.start_with(terminal, answers, stdout_sink(terminal.style()))
            .await
    }

    /// [`HostOptions::start`] with the host's events going to `events`.
    pub async fn start_with(
        &self,
        terminal: &Terminal,
        answers: Answers,
        events: EventSink,
    ) -> Result<(Host, Vec<StartFailure>), SetupError> {
        let model = self.model()?;
        let config = self.config(terminal)?;
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
        Host::from_config(
            &config,
            &StartOptions::default(),
            model,
            consent,
            interaction,
            events,
        )
        .await
        .map_err(|e| SetupError::Failed(e.into()))
    }
}

fn usage(message: String) -> SetupError {
    SetupError::Usage(anyhow::anyhow!(message))
}

/// A provider that cannot be set up (no key, a bad base URL) is a usage error.
fn provider_setup(error: junction_host::model::ModelError) -> SetupError {
    SetupError::Usage(error.into())
}

/// A sink that renders each event on stdout. It writes to stdout directly rather than
/// through the [`Terminal`], so that a server's log line never waits on a question the
/// person has not answered yet.
pub fn stdout_sink(style: Style) -> EventSink {
    let renderer = Mutex::new(Renderer::new(style));
    EventSink::callback(move |event| {
        let lines = renderer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .render(&event);
        let mut out = std::io::stdout().lock();
        for line in lines {
            use std::io::Write;
            let _ = writeln!(out, "{line}");
        }
        let _ = std::io::Write::flush(&mut out);
    })
}

/// Prints why setup failed and returns the exit code.
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
