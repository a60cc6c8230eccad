//! Server definitions, read from the config files other hosts already use.
//!
//! One reader takes all of these shapes:
//!
//! - Claude Desktop `claude_desktop_config.json` and Cursor: `{"mcpServers": {"name":
//!   {"command", "args", "env"}}}`;
//! - Claude Code `.mcp.json`: the same plus `"type": "stdio" | "http" | "sse"` and `url`,
//!   `headers`;
//! - VS Code `mcp.json`: `{"servers": {...}}` with the same members, written as JSONC
//!   (comments and trailing commas are accepted).
//!
//! `${VAR}`, `${VAR:-default}` and `${env:VAR}` are expanded in `command`, `args`, `env`,
//! `cwd`, `url`, `headers` and `oauth` (see [`expand()`]; `oauth` is
//! [`OAuthSettings`](crate::auth::OAuthSettings)). Each entry may also carry Junction's own members:
//! `"trusted": true` (believe its tool annotations), `"disabled": true`, `"startupTimeoutMs"`,
//! `"policy": {"tool-glob": "allow" | "ask" | "deny"}`, `"sampling": "allow" | "ask" |
//! "deny"` (whether the server may use the host's model: `ask`, the default, puts each
//! request and its answer to the user) and `"roots": ["file:///path", ...]` (the directories
//! the server is told about; without it the host's default roots,
//! [`StartOptions::roots`](crate::servers::StartOptions::roots), which the chat fills with
//! its working directory, and with neither the roots capability is not declared to it),
//! `"protocolVersion": "auto" | "2026-07-28" | "2025-11-25" | ...` (the revision to speak;
//! `auto`, the default, probes `server/discover` and falls back to the handshake) and
//! `"taskAfterMs"` (a tool whose `execution.taskSupport` is `optional` runs as a task once
//! one of its calls took this long, `0` always; `required` ones always do). A top-level `"junction"` section
//! holds rules across servers, the file where "always allow" answers are kept,
//! `"maxToolOutput"`, the most characters one tool result, attached resource or prompt may put
//! into the conversation, the bounds on what a server may send (`"maxListItems"` and
//! `"maxListBytes"` for one listing over all its pages, `"maxMessage"` for one message, in
//! bytes), `"maxServerLog"` (the bytes of the server log file before it is moved to `.1`),
//! `"toolTimeoutMs"`, `"systemPrompt"` and `"logLevel"` (the least
//! severe log message servers are asked for), `"markdown"` (`false` shows the model's answers
//! as they are, as `--no-markdown` does) and `"model"` (the model used when no `--model`
//! is given, written the same way, e.g. `"anthropic:claude-sonnet-4-5"`). Where these files
//! are found and how they are merged is in [`scopes`]:
//!
//! ```json
//! { "mcpServers": { "library": { "command": "junction", "args": ["serve", "library"], "trusted": true } },
//!   "junction": { "policy": { "*__delete_*": "deny" }, "consentFile": "${HOME}/.junction/consent.json" } }
//! ```
//!
//! A bad file gets a [`ConfigError`] that names the file, the server and the field.

pub mod approval;
pub mod edit;
mod env_file;
mod expand;
mod jsonc;
mod keys;
pub mod scopes;

pub use expand::{expand, expand_checked};
pub use scopes::Scope;

use junction::client::Negotiation;
use junction_protocol::logging::LoggingLevel;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::policy::{Action, Rule};

/// Why a config file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: could not read the file: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON (or JSONC).
    #[error("{}:{line}:{column}: not valid JSON: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The line of the error (1-based).
        line: usize,
        /// The column of the error (1-based).
        column: usize,
        /// The parser's reason.
        message: String,
    },
    /// A member has the wrong shape or value.
    #[error("{}: {}field `{field}`: {reason}", path.display(), server.as_ref().map(|s| format!("server `{s}`: ")).unwrap_or_default())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The server entry, when the problem is inside one.
        server: Option<String>,
        /// The member, e.g. `args` or `junction.policy`.
        field: String,
        /// What is wrong, and what is expected.
        reason: String,
    },
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportConfig {
    /// A child process spoken to over stdin/stdout.
    Stdio(StdioConfig),
    /// A remote server over Streamable HTTP, or the legacy HTTP+SSE transport.
    Http(HttpConfig),
}

/// A server run as a child process.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StdioConfig {
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables to set; `None` (JSON `null`, VS Code) asks for the variable to be removed.
    pub env: BTreeMap<String, Option<String>>,
    /// The working directory.
    pub cwd: Option<PathBuf>,
}

/// A server reached over HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// The endpoint, `http://` or `https://`.
    pub url: String,
    /// Headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// `true` for `"type": "sse"`, the 2024-11-05 HTTP+SSE transport.
    pub legacy_sse: bool,
    /// The `oauth` member: a pre-registered client, scopes, the callback port.
    pub oauth: Option<crate::auth::OAuthSettings>,
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The config key; it prefixes the server's tool names and names it in commands.
    pub name: String,
    /// How to reach it.
    pub transport: TransportConfig,
    /// Whether its tool annotations (`readOnlyHint`) are believed.
    pub trusted: bool,
    /// Whether it is left out when servers start.
    pub disabled: bool,
    /// How long connecting may take, when the entry sets it.
    pub startup_timeout: Option<Duration>,
    /// How long one tool call may go without an answer or progress (`toolTimeoutMs`),
    /// when the entry sets it.
    pub tool_timeout: Option<Duration>,
    /// From how long a call of one of its `optional` tools on, that tool runs as a task
    /// (`taskAfterMs`; `0`: every call of an `optional` tool), when the entry sets it.
    pub task_after: Option<Duration>,
    /// Whether its sampling requests reach the model without asking (`allow`), after the
    /// user approves them (`ask`, the default), or never (`deny`).
    pub sampling: Action,
    /// The `file://` roots it is told about; `None` leaves the roots capability undeclared.
    pub roots: Option<Vec<String>>,
    /// The protocol revision to speak (`protocolVersion`: `"auto"` or a revision such as
    /// `"2026-07-28"`), when the entry sets it; the host negotiates otherwise.
    pub protocol_version: Option<Negotiation>,
    /// The file it came from.
    pub source: PathBuf,
    /// The kind of file it came from (set by discovery; [`Scope::Given`] for a file read
    /// on its own).
    pub scope: Scope,
    /// The SHA-256 of the entry as written (before variables are expanded, keys sorted), so
    /// that an approval of a project server holds for this entry only.
    pub fingerprint: String,
}

/// Junction's policy section: consent rules and where remembered answers are kept.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PolicyConfig {
    /// Rules from `junction.policy` and from each server's `policy`.
    pub rules: Vec<Rule>,
    /// Where "always allow" answers are kept (`junction.consentFile`).
    pub consent_file: Option<PathBuf>,
    /// Where the definitions tools were allowed in are pinned across runs; no config file
    /// sets it (the command line keeps them in the user's config directory), and without
    /// it pins last for the run.
    pub pins_file: Option<PathBuf>,
}

/// Everything one config file defines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    /// The servers, in name order.
    pub servers: Vec<ServerConfig>,
    /// Consent rules and their storage.
    pub policy: PolicyConfig,
    /// At most how many characters one tool result puts into the conversation
    /// (`junction.maxToolOutput`); `None` leaves the host's default.
    pub max_tool_output: Option<usize>,
    /// At most how many items one listing of a server (tools, prompts, resources,
    /// templates) gathers over all its pages (`junction.maxListItems`); `None` leaves
    /// [`ClientOptions::max_list_items`](junction::client::ClientOptions::max_list_items).
    pub max_list_items: Option<usize>,
    /// At most how many bytes one listing of a server gathers over all its pages
    /// (`junction.maxListBytes`); `None` leaves
    /// [`ClientOptions::max_list_bytes`](junction::client::ClientOptions::max_list_bytes).
    pub max_list_bytes: Option<usize>,
    /// The largest message read from a server, in bytes (`junction.maxMessage`): one
    /// HTTP answer or event ([`HttpClient::max_message`](junction::transport::http::client::HttpClient::max_message))
    /// or one stdio line ([`Limits::max_frame`](junction::transport::Limits::max_frame));
    /// `None` leaves 4 MiB.
    pub max_message: Option<usize>,
    /// How large the server log file may grow before it is moved to `.1`
    /// (`junction.maxServerLog`); `None` leaves
    /// [`server_log::MAX_BYTES`](crate::server_log::MAX_BYTES).
    pub max_server_log: Option<usize>,
    /// How long one tool call may go without an answer or progress
    /// (`junction.toolTimeoutMs`); `None` leaves the host's default.
    pub tool_timeout: Option<Duration>,
    /// The system prompt for the model (`junction.systemPrompt`); `None` leaves the host's
    /// default.
    pub system_prompt: Option<String>,
    /// The least severe log message servers are asked to send (`junction.logLevel`); `None`
    /// leaves the host's default (`warning`).
    pub log_level: Option<LoggingLevel>,
    /// Whether the chat renders the model's answers as Markdown on a terminal
    /// (`junction.markdown`); `None` leaves the default (on; `--no-markdown` turns it off).
    pub markdown: Option<bool>,
    /// The model to talk to when no `--model` is given (`junction.model`, written as
    /// `--model` takes it: `anthropic:MODEL`, `openai:MODEL`, `scripted:FILE`).
    pub model: Option<String>,
    /// Mistakes that do not stop the config from being used (an unknown member, with the
    /// member probably meant), one sentence each, for the user to see.
    pub warnings: Vec<String>,
    /// Set (to its path) for a project file by [`Config::restrict_to_project`]: its limits
    /// may lower those that apply, never raise them ([`scopes::merge`]).
    pub lower_limits_only: Option<PathBuf>,
}

impl Config {
    /// Reads `path`, expanding variables from the process environment.
    pub fn load(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        Config::load_with(path, &|name| std::env::var(name).ok())
    }

    /// [`Config::load`] with variables looked up with `env` (which may ask the person for
    /// a VS Code input, `JUNCTION_INPUT_ID`).
    pub fn load_with(
        path: impl AsRef<Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Config::parse(&text, path, env)
    }

    /// Parses `text` as the contents of `path`, expanding variables with `env`.
    pub fn parse(
        text: &str,
        path: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let clean = jsonc::to_json(text);
        let root: Value = serde_json::from_str(&clean).map_err(|e| ConfigError::Syntax {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        let reader = Reader {
            path,
            env,
            warnings: RefCell::new(Vec::new()),
        };
        let Value::Object(root) = root else {
            return Err(reader.invalid(None, "(top level)", "expected a JSON object"));
        };
        let mut config = Config::default();
        let mut seen = BTreeMap::new();
        for key in ["mcpServers", "servers"] {
            let Some(entries) = root.get(key) else {
                continue;
            };
            let Value::Object(entries) = entries else {
                return Err(reader.invalid(None, key, "expected an object of server entries"));
            };
            for (name, entry) in entries {
                if let Some(other) = seen.insert(name.clone(), key) {
                    return Err(reader.invalid(
                        Some(name),
                        key,
                        &format!("the server is defined in both `{other}` and `{key}`"),
                    ));
                }
                let (server, rules) = reader.server(name, entry)?;
                config.servers.push(server);
                config.policy.rules.extend(rules);
            }
        }
        config.servers.sort_by(|a, b| a.name.cmp(&b.name));
        if let Some(section) = root.get("junction") {
            reader.junction(section, &mut config)?;
        }
        config.warnings = reader.warnings.into_inner();
        Ok(config)
    }

    /// The server called `name`.
    pub fn server(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }
}

struct Reader<'a> {
    path: &'a Path,
    env: &'a dyn Fn(&str) -> Option<String>,
    warnings: RefCell<Vec<String>>,
}

/// Characters a server name may not hold: they separate parts of tool names (`__`),
/// commands (`/server:prompt`), attachments (`@server:uri`) and globs.
pub(crate) fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("a server name may not be empty")
    } else if name.contains("__") {
        Some("a server name may not contain `__`, which separates server and tool in tool names")
    } else if name.contains(':') || name.contains('*') || name.chars().any(char::is_whitespace) {
        Some("a server name may not contain `:`, `*` or spaces")
    } else {
        None
    }
}

impl Reader<'_> {
    /// Warns about the members of `object` that are not in `known` (nor in `tolerated`).
    fn check_members(
        &self,
        object: &Map<String, Value>,
        known: &[&str],
        tolerated: &[&str],
        place: &str,
    ) {
        let place = format!("{}: {place}", self.path.display());
        let found = object
            .keys()
            .filter(|k| !tolerated.contains(&k.as_str()))
            .filter_map(|k| keys::unknown(k, known, &place));
        self.warnings.borrow_mut().extend(found);
    }

    /// A positive number of milliseconds, or nothing.
    fn millis(
        &self,
        server: Option<&str>,
        field: &str,
        value: Option<&Value>,
    ) -> Result<Option<Duration>, ConfigError> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_u64() {
                Some(ms) if ms > 0 => Ok(Some(Duration::from_millis(ms))),
                _ => Err(self.invalid(
                    server,
                    field,
                    "expected a positive whole number of milliseconds",
                )),
            },
        }
    }

    /// A positive whole number of `unit` (`None` when absent or `null`).
    fn count(
        &self,
        field: &str,
        value: Option<&Value>,
        unit: &str,
    ) -> Result<Option<usize>, ConfigError> {
        match value {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(n) if n > 0 => Ok(Some(n)),
                _ => Err(self.invalid(
                    None,
                    field,
                    &format!("expected a positive whole number of {unit}"),
                )),
            },
        }
    }

    fn invalid(&self, server: Option<&str>, field: &str, reason: &str) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.to_owned(),
            server: server.map(str::to_owned),
            field: field.to_owned(),
            reason: reason.to_owned(),
        }
    }

    /// Expands `text` (member `field` of `server`); a variable that is unset with no
    /// default is an error naming it. `${workspaceFolder}` (VS Code) is the folder that
    /// holds the config (the one above `.vscode/` for `.vscode/mcp.json`), `${userHome}`
    /// the home directory, and `${input:ID}` looks up `JUNCTION_INPUT_ID` (which the
    /// caller's `env` may ask the person for).
    fn expand(&self, server: Option<&str>, field: &str, text: &str) -> Result<String, ConfigError> {
        let lookup = |name: &str| match name {
            "workspaceFolder" => Some(self.workspace_folder()),
            "userHome" => (self.env)("HOME"),
            _ => match name.strip_prefix("input:") {
                Some(id) => (self.env)(&format!("JUNCTION_INPUT_{}", id.to_ascii_uppercase())),
                None => (self.env)(name),
            },
        };
        let (expanded, missing) = expand_checked(text, &lookup);
        match missing.first() {
            None => Ok(expanded),
            Some(name) => Err(self.invalid(
                server,
                field,
                &match name.strip_prefix("input:") {
                    Some(id) => format!(
                        "`${{{name}}}` has no value: set JUNCTION_INPUT_{} (the chat asks for it on a terminal)",
                        id.to_ascii_uppercase()
                    ),
                    None => format!(
                        "the variable `{name}` is not set and `${{{name}}}` has no default; set it, or write `${{{name}:-default}}`"
                    ),
                },
            )),
        }
    }

    /// The folder `${workspaceFolder}` names.
    fn workspace_folder(&self) -> String {
        let absolute = std::path::absolute(self.path).unwrap_or_else(|_| self.path.to_owned());
        let dir = absolute.parent().unwrap_or(Path::new("."));
        let dir = if dir.file_name().is_some_and(|n| n == ".vscode") {
            dir.parent().unwrap_or(dir)
        } else {
            dir
        };
        dir.display().to_string()
    }

    fn string(
        &self,
        server: &str,
        entry: &Map<String, Value>,
        field: &str,
    ) -> Result<Option<String>, ConfigError> {
        match entry.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => self.expand(Some(server), field, s).map(Some),
            Some(_) => Err(self.invalid(Some(server), field, "expected a string")),
        }
    }

    fn flag(
        &self,
        server: &str,
        entry: &Map<String, Value>,
        field: &str,
    ) -> Result<bool, ConfigError> {
        match entry.get(field) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(self.invalid(Some(server), field, "expected true or false")),
        }
    }

    fn server(&self, name: &str, entry: &Value) -> Result<(ServerConfig, Vec<Rule>), ConfigError> {
        if let Some(problem) = name_problem(name) {
            return Err(self.invalid(Some(name), "(name)", problem));
        }
        let Value::Object(entry) = entry else {
            return Err(self.invalid(Some(name), "(entry)", "expected an object"));
        };
        self.check_members(
            entry,
            keys::SERVER,
            keys::OTHER_HOSTS,
            &format!("server `{name}`"),
        );
        let kind = self.string(name, entry, "type")?;
        let transport = match kind.as_deref() {
            Some("stdio") => self.stdio(name, entry)?,
            Some("http") | Some("streamable-http") | Some("streamableHttp") => {
                self.http(name, entry, false)?
            }
            Some("sse") => self.http(name, entry, true)?,
            Some(other) => {
                return Err(self.invalid(
                    Some(name),
                    "type",
                    &format!(
                        "unknown transport {other:?}; expected \"stdio\", \"http\" or \"sse\""
                    ),
                ))
            }
            None if entry.contains_key("command") => self.stdio(name, entry)?,
            None if entry.contains_key("url") => self.http(name, entry, false)?,
            None => return Err(self.invalid(
                Some(name),
                "command",
                "missing: a server needs `command` (a local process) or `url` (a remote server)",
            )),
        };
        let startup_timeout = self.millis(
            Some(name),
            "startupTimeoutMs",
            entry.get("startupTimeoutMs"),
        )?;
        let tool_timeout = self.millis(Some(name), "toolTimeoutMs", entry.get("toolTimeoutMs"))?;
        let task_after = match entry.get("taskAfterMs") {
            None | Some(Value::Null) => None,
            Some(v) => Some(Duration::from_millis(v.as_u64().ok_or_else(|| {
                self.invalid(
                    Some(name),
                    "taskAfterMs",
                    "expected a whole number of milliseconds (0 or more)",
                )
            })?)),
        };
        let rules = match entry.get("policy") {
            None | Some(Value::Null) => Vec::new(),
            Some(policy) => self
                .rules(Some(name), "policy", policy)?
                .into_iter()
                .map(|(pattern, action)| Rule::new(format!("{name}__{pattern}"), action))
                .collect(),
        };
        let sampling = match entry.get("sampling") {
            None | Some(Value::Null) => Action::Ask,
            Some(v) => v.as_str().and_then(Action::parse).ok_or_else(|| {
                self.invalid(
                    Some(name),
                    "sampling",
                    "expected \"allow\", \"ask\" or \"deny\"",
                )
            })?,
        };
        let server = ServerConfig {
            name: name.to_owned(),
            transport,
            trusted: self.flag(name, entry, "trusted")?,
            disabled: self.flag(name, entry, "disabled")?,
            startup_timeout,
            tool_timeout,
            task_after,
            sampling,
            roots: self.roots(name, entry)?,
            protocol_version: match entry.get("protocolVersion") {
                None | Some(Value::Null) => None,
                Some(v) => Some(
                    v.as_str()
                        .ok_or_else(|| "expected a string".to_owned())
                        .and_then(str::parse)
                        .map_err(|e| self.invalid(Some(name), "protocolVersion", &e))?,
                ),
            },
            source: self.path.to_owned(),
            scope: Scope::Given,
            fingerprint: crate::policy::definition::hex(&<sha2::Sha256 as sha2::Digest>::digest(
                crate::policy::definition::canonical_json(&Value::Object(entry.clone())).as_bytes(),
            )),
        };
        Ok((server, rules))
    }

    fn roots(
        &self,
        name: &str,
        entry: &Map<String, Value>,
    ) -> Result<Option<Vec<String>>, ConfigError> {
        let items = match entry.get("roots") {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Array(items)) => items,
            Some(_) => {
                return Err(self.invalid(Some(name), "roots", "expected an array of file:// URIs"))
            }
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let field = format!("roots[{i}]");
                let Value::String(uri) = item else {
                    return Err(self.invalid(Some(name), &field, "expected a file:// URI"));
                };
                let uri = self.expand(Some(name), &field, uri)?;
                if uri.starts_with("file://") {
                    Ok(uri)
                } else {
                    Err(self.invalid(
                        Some(name),
                        &field,
                        &format!("{uri:?} is not a file:// URI; roots must be file:// URIs"),
                    ))
                }
            })
            .collect::<Result<_, _>>()
            .map(Some)
    }

    fn stdio(
        &self,
        name: &str,
        entry: &Map<String, Value>,
    ) -> Result<TransportConfig, ConfigError> {
        let command = self
            .string(name, entry, "command")?
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                self.invalid(
                    Some(name),
                    "command",
                    "missing: a stdio server needs the program to run",
                )
            })?;
        let args = match entry.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) => self.expand(Some(name), &format!("args[{i}]"), s),
                    Value::Number(n) => Ok(n.to_string()),
                    _ => Err(self.invalid(Some(name), &format!("args[{i}]"), "expected a string")),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(self.invalid(Some(name), "args", "expected an array of strings"))
            }
        };
        let mut env = BTreeMap::new();
        if let Some(file) = self.string(name, entry, "envFile")? {
            let file = Path::new(&self.workspace_folder()).join(file);
            let read = |reason: String| {
                self.invalid(
                    Some(name),
                    "envFile",
                    &format!("{}: {reason}", file.display()),
                )
            };
            let text = std::fs::read_to_string(&file).map_err(|e| read(e.to_string()))?;
            let vars = env_file::parse(&text)
                .map_err(|line| read(format!("line {line} is not KEY=VALUE")))?;
            env.extend(vars.into_iter().map(|(k, v)| (k, Some(v))));
        }
        match entry.get("env") {
            None | Some(Value::Null) => {}
            Some(Value::Object(vars)) => {
                for (key, value) in vars {
                    let value = match value {
                        Value::String(s) => {
                            Some(self.expand(Some(name), &format!("env.{key}"), s)?)
                        }
                        Value::Number(n) => Some(n.to_string()),
                        Value::Bool(b) => Some(b.to_string()),
                        Value::Null => None,
                        _ => {
                            return Err(self.invalid(
                                Some(name),
                                &format!("env.{key}"),
                                "expected a string, a number or null",
                            ))
                        }
                    };
                    env.insert(key.clone(), value);
                }
            }
            Some(_) => {
                return Err(self.invalid(Some(name), "env", "expected an object of variables"))
            }
        }
        let cwd = self.string(name, entry, "cwd")?.map(PathBuf::from);
        Ok(TransportConfig::Stdio(StdioConfig {
            command,
            args,
            env,
            cwd,
        }))
    }

    fn http(
        &self,
        name: &str,
        entry: &Map<String, Value>,
        legacy_sse: bool,
    ) -> Result<TransportConfig, ConfigError> {
        let url = self.string(name, entry, "url")?.ok_or_else(|| {
            self.invalid(
                Some(name),
                "url",
                "missing: an http or sse server needs its URL",
            )
        })?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(self.invalid(
                Some(name),
                "url",
                &format!("{url:?} is not an http:// or https:// URL"),
            ));
        }
        let mut headers = BTreeMap::new();
        match entry.get("headers") {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (key, value) in map {
                    let Value::String(value) = value else {
                        return Err(self.invalid(
                            Some(name),
                            &format!("headers.{key}"),
                            "expected a string",
                        ));
                    };
                    headers.insert(
                        key.clone(),
                        self.expand(Some(name), &format!("headers.{key}"), value)?,
                    );
                }
            }
            Some(_) => {
                return Err(self.invalid(
                    Some(name),
                    "headers",
                    "expected an object of header values",
                ))
            }
        }
        let oauth = crate::auth::OAuthSettings::parse(entry.get("oauth"))
            .map_err(|(field, reason)| self.invalid(Some(name), &field, &reason))?
            .map(|o| o.expand(|field, text| self.expand(Some(name), field, text)))
            .transpose()?;
        Ok(TransportConfig::Http(HttpConfig {
            url,
            headers,
            legacy_sse,
            oauth,
        }))
    }

    fn rules(
        &self,
        server: Option<&str>,
        field: &str,
        value: &Value,
    ) -> Result<Vec<(String, Action)>, ConfigError> {
        let Value::Object(map) = value else {
            return Err(self.invalid(
                server,
                field,
                "expected an object of \"glob\": \"allow\" | \"ask\" | \"deny\"",
            ));
        };
        map.iter()
            .map(|(pattern, action)| {
                let action = action.as_str().and_then(Action::parse).ok_or_else(|| {
                    self.invalid(
                        server,
                        &format!("{field}.{pattern}"),
                        "expected \"allow\", \"ask\" or \"deny\"",
                    )
                })?;
                Ok((pattern.clone(), action))
            })
            .collect()
    }

    fn junction(&self, section: &Value, config: &mut Config) -> Result<(), ConfigError> {
        let policy = &mut config.policy;
        let Value::Object(section) = section else {
            return Err(self.invalid(None, "junction", "expected an object"));
        };
        self.check_members(section, keys::JUNCTION, &[], "junction");
        config.tool_timeout =
            self.millis(None, "junction.toolTimeoutMs", section.get("toolTimeoutMs"))?;
        match section.get("systemPrompt") {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => config.system_prompt = Some(text.clone()),
            Some(_) => {
                return Err(self.invalid(None, "junction.systemPrompt", "expected a string"))
            }
        }
        match section.get("model") {
            None | Some(Value::Null) => {}
            Some(Value::String(spec)) if spec.contains(':') => {
                config.model = Some(self.expand(None, "junction.model", spec)?)
            }
            Some(_) => {
                return Err(self.invalid(
                    None,
                    "junction.model",
                    "expected \"PROVIDER:MODEL\", as --model takes it (e.g. \"anthropic:claude-sonnet-4-5\")",
                ))
            }
        }
        match section.get("markdown") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(on)) => config.markdown = Some(*on),
            Some(_) => {
                return Err(self.invalid(None, "junction.markdown", "expected true or false"))
            }
        }
        match section.get("logLevel") {
            None | Some(Value::Null) => {}
            Some(value) => match serde_json::from_value(value.clone()) {
                Ok(level) => config.log_level = Some(level),
                Err(_) => {
                    return Err(self.invalid(
                        None,
                        "junction.logLevel",
                        "expected one of \"debug\", \"info\", \"notice\", \"warning\", \"error\", \"critical\", \"alert\", \"emergency\"",
                    ))
                }
            },
        }
        if let Some(rules) = section.get("policy") {
            for (pattern, action) in self.rules(None, "junction.policy", rules)? {
                policy.rules.push(Rule::new(pattern, action));
            }
        }
        match section.get("consentFile") {
            None | Some(Value::Null) => {}
            Some(Value::String(path)) => {
                policy.consent_file = Some(PathBuf::from(self.expand(
                    None,
                    "junction.consentFile",
                    path,
                )?))
            }
            Some(_) => return Err(self.invalid(None, "junction.consentFile", "expected a path")),
        }
        config.max_tool_output = self.count(
            "junction.maxToolOutput",
            section.get("maxToolOutput"),
            "characters",
        )?;
        config.max_list_items = self.count(
            "junction.maxListItems",
            section.get("maxListItems"),
            "items",
        )?;
        config.max_list_bytes = self.count(
            "junction.maxListBytes",
            section.get("maxListBytes"),
            "bytes",
        )?;
        config.max_message =
            self.count("junction.maxMessage", section.get("maxMessage"), "bytes")?;
        config.max_server_log = self.count(
            "junction.maxServerLog",
            section.get("maxServerLog"),
            "bytes",
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
