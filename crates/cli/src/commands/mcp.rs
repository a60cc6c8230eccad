//! `junction mcp add|add-json|remove|list|get`: the configured servers, edited and shown.
//!
//! The files are those `junction chat` reads ([`junction_host::config::scopes`]): the user's
//! `$XDG_CONFIG_HOME/junction/mcp.json` (`--scope user`, the default for `add`) and the
//! project's `.mcp.json` at the git root or the working directory (`--scope project`).
//! Edits keep the rest of a file as it was, comments included, and a bad entry, name or
//! duplicate is refused before anything is written ([`junction_host::config::edit`]).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context as _};
use junction_host::config::approval::{default_approvals_file, Approvals};
use junction_host::config::edit::{add_server, raw_entry, remove_server};
use junction_host::config::{scopes, Config, Scope};
use junction_host::display;
use junction_host::events::EventSink;
use junction_host::servers::{Servers, StartOptions};
use serde_json::{Map, Value};

use super::host_options::{discovered, target};

/// The arguments of `junction mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    #[command(subcommand)]
    action: Action,
}

/// A scope `junction mcp` writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum WriteScope {
    /// $XDG_CONFIG_HOME/junction/mcp.json: yours, in every directory.
    User,
    /// .mcp.json at the project root (the git root, else the working directory): shared
    /// with the repository.
    Project,
}

impl From<WriteScope> for Scope {
    fn from(scope: WriteScope) -> Scope {
        match scope {
            WriteScope::User => Scope::User,
            WriteScope::Project => Scope::Project,
        }
    }
}

/// How `add` reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Transport {
    /// A command run as a child process: `add NAME -- COMMAND ARGS...`.
    Stdio,
    /// Streamable HTTP: `add --transport http NAME URL`.
    Http,
    /// The legacy HTTP+SSE transport: `add --transport sse NAME URL`.
    Sse,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Add a server: `add NAME -- COMMAND ARGS...`, or `add --transport http NAME URL`.
    Add {
        /// Which file [default: user].
        #[arg(long, short = 's', value_enum, default_value_t = WriteScope::User)]
        scope: WriteScope,
        /// How it is reached.
        #[arg(long, short = 't', value_enum, default_value_t = Transport::Stdio)]
        transport: Transport,
        /// A variable for a stdio server, KEY=VALUE (repeatable; `${VAR}` is kept for the
        /// host to expand when it starts the server).
        #[arg(long, short = 'e', value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// A header for an HTTP server, "Name: value" (repeatable).
        #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
        headers: Vec<String>,
        /// The server's name, which prefixes its tools (`NAME__tool`).
        name: String,
        /// The URL (http, sse), or the command and its arguments after `--` (stdio).
        #[arg(num_args = 1..)]
        target: Vec<String>,
    },
    /// Add a server from its JSON entry, e.g. `add-json files '{"command":"npx","args":[...]}'`.
    AddJson {
        /// Which file [default: user].
        #[arg(long, short = 's', value_enum, default_value_t = WriteScope::User)]
        scope: WriteScope,
        /// The server's name.
        name: String,
        /// The entry, as it would be written in the file.
        json: String,
    },
    /// Remove a server from the file that defines it (`--scope` when several do).
    Remove {
        /// Which file [default: the one that defines it].
        #[arg(long, short = 's', value_enum)]
        scope: Option<WriteScope>,
        /// The server's name.
        name: String,
    },
    /// Every configured server with its scope, its file and whether it starts.
    List,
    /// One server's entry as written, with env and header values masked.
    Get {
        /// The server's name.
        name: String,
    },
}

/// Runs `junction mcp`.
pub async fn run(args: McpArgs) -> ExitCode {
    let result = match args.action {
        Action::Add {
            scope,
            transport,
            env,
            headers,
            name,
            target,
        } => entry(transport, &env, &headers, &target).and_then(|e| add(scope, &name, &e)),
        Action::AddJson { scope, name, json } => serde_json::from_str::<Value>(&json)
            .context("the entry is not JSON")
            .and_then(|e| add(scope, &name, &e)),
        Action::Remove { scope, name } => remove(scope, &name),
        Action::List => list().await,
        Action::Get { name } => get(&name),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("junction mcp: {}", display::text(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

/// The entry `add` writes.
fn entry(
    transport: Transport,
    env: &[String],
    headers: &[String],
    target: &[String],
) -> anyhow::Result<Value> {
    let mut entry = Map::new();
    match transport {
        Transport::Stdio => {
            if !headers.is_empty() {
                bail!("--header is for http and sse servers; a stdio server takes --env");
            }
            let (command, args) = target
                .split_first()
                .ok_or_else(|| anyhow!("no command: add NAME -- COMMAND ARGS..."))?;
            entry.insert("command".into(), command.clone().into());
            if !args.is_empty() {
                entry.insert("args".into(), args.to_vec().into());
            }
            if !env.is_empty() {
                let mut vars = Map::new();
                for pair in env {
                    let (key, value) = pair
                        .split_once('=')
                        .filter(|(k, _)| !k.is_empty())
                        .ok_or_else(|| anyhow!("--env {pair:?} is not KEY=VALUE"))?;
                    vars.insert(key.to_owned(), value.into());
                }
                entry.insert("env".into(), Value::Object(vars));
            }
        }
        Transport::Http | Transport::Sse => {
            if !env.is_empty() {
                bail!("--env is for stdio servers; an http server takes --header");
            }
            let [url] = target else {
                bail!("an http server takes one URL: add --transport http NAME URL");
            };
            let kind = if transport == Transport::Http {
                "http"
            } else {
                "sse"
            };
            entry.insert("type".into(), kind.into());
            entry.insert("url".into(), url.clone().into());
            if !headers.is_empty() {
                let mut map = Map::new();
                for header in headers {
                    let (key, value) = header
                        .split_once(':')
                        .filter(|(k, _)| !k.trim().is_empty())
                        .ok_or_else(|| anyhow!("--header {header:?} is not \"Name: value\""))?;
                    map.insert(key.trim().to_owned(), value.trim().into());
                }
                entry.insert("headers".into(), Value::Object(map));
            }
        }
    }
    Ok(Value::Object(entry))
}

/// The file of `scope` that `add` writes.
fn file_of(scope: WriteScope) -> anyhow::Result<PathBuf> {
    match scope {
        WriteScope::User => scopes::user_config_file()
            .ok_or_else(|| anyhow!("no user config directory: set XDG_CONFIG_HOME or HOME")),
        WriteScope::Project => {
            let cwd = std::env::current_dir().context("the working directory")?;
            Ok(scopes::project_file(&scopes::project_root(&cwd)))
        }
    }
}

fn add(scope: WriteScope, name: &str, entry: &Value) -> anyhow::Result<()> {
    let path = file_of(scope)?;
    add_server(&path, "mcpServers", name, entry)?;
    println!(
        "added server {} to {} ({})",
        display::name(name),
        path.display(),
        Scope::from(scope)
    );
    Ok(())
}

/// Every discovered file that defines `name`, with its scope.
fn defining(name: &str) -> anyhow::Result<Vec<(Scope, PathBuf)>> {
    let mut found = Vec::new();
    for (scope, path) in discovered() {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("could not read {}", path.display()))?;
        if raw_entry(&text, name).is_some() {
            found.push((scope, path));
        }
    }
    Ok(found)
}

fn remove(scope: Option<WriteScope>, name: &str) -> anyhow::Result<()> {
    let mut found = defining(name)?;
    if let Some(scope) = scope {
        found.retain(|(s, _)| *s == Scope::from(scope));
    }
    let (scope, path) = match found.as_slice() {
        [] => bail!(
            "no {}file defines a server called `{name}` (junction mcp list shows them)",
            scope.map_or(String::new(), |s| format!("{} ", Scope::from(s)))
        ),
        [one] => one.clone(),
        several => bail!(
            "`{name}` is defined in {}; say which with --scope",
            several
                .iter()
                .map(|(s, p)| format!("{} ({s})", p.display()))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
    };
    remove_server(&path, name)?;
    println!(
        "removed server {} from {} ({scope})",
        display::name(name),
        path.display()
    );
    Ok(())
}

/// Each server of each file, starting those that would start in a chat to say whether
/// they do.
async fn list() -> anyhow::Result<()> {
    let files = discovered();
    if files.is_empty() {
        println!("no servers are configured (junction mcp add NAME -- COMMAND adds one)");
        return Ok(());
    }
    let approvals = default_approvals_file().map(Approvals::load).transpose()?;
    let mut layers = Vec::new();
    for (scope, path) in &files {
        layers.push(Config::load(path)?.in_scope(*scope));
    }
    let (merged, _) = scopes::merge(layers.clone());
    let startable: Vec<_> = merged
        .servers
        .iter()
        .filter(|s| {
            s.scope != Scope::Project || approvals.as_ref().is_some_and(|a| a.is_approved(s))
        })
        .cloned()
        .collect();
    let options = StartOptions::default().limits_of(&merged);
    let (servers, failures) = Servers::start(&startable, &options, &EventSink::discard()).await;
    for layer in &layers {
        for server in &layer.servers {
            let used = merged
                .server(&server.name)
                .is_some_and(|m| m.source == server.source);
            let status = if !used {
                "overridden by a file of higher precedence".to_owned()
            } else if server.disabled {
                "disabled".to_owned()
            } else if !startable.iter().any(|s| s.name == server.name) {
                "not approved: a chat on a terminal asks before starting it".to_owned()
            } else if let Some(connected) = servers.get(&server.name) {
                format!("connected, {} tools", connected.tools().len())
            } else {
                let reason = failures
                    .iter()
                    .find(|f| f.server == server.name)
                    .map_or("did not start", |f| f.reason.as_str());
                format!("failed: {reason}")
            };
            println!(
                "{}  {}  {}  {}  {}",
                display::name(&server.name),
                server.scope,
                server.source.display(),
                target(server),
                display::line(&status)
            );
        }
    }
    servers.shutdown().await;
    Ok(())
}

fn get(name: &str) -> anyhow::Result<()> {
    let found = defining(name)?;
    if found.is_empty() {
        bail!("no configured server is called `{name}` (junction mcp list shows them)");
    }
    let used = found.len() - 1;
    for (i, (scope, path)) in found.iter().enumerate() {
        let text = std::fs::read_to_string(path)?;
        let entry = raw_entry(&text, name).unwrap_or_default();
        println!(
            "{} ({scope}: {}){}",
            display::name(name),
            path.display(),
            if i == used {
                ""
            } else {
                ", overridden by the next"
            }
        );
        println!("{}", serde_json::to_string_pretty(&masked(&entry))?);
    }
    Ok(())
}

/// `entry` with the values of `env` and `headers`, and OAuth client secrets, masked; a
/// value that only names variables (`${TOKEN}`) holds no secret and is shown.
fn masked(entry: &Value) -> Value {
    let mut entry = entry.clone();
    let hide = |value: &mut Value| {
        if let Value::String(text) = value {
            let only_variables = text.starts_with("${")
                && text.ends_with('}')
                && text.matches("${").count() == 1
                && !text.contains(' ');
            if !only_variables {
                *value = Value::String("****".to_owned());
            }
        } else if !value.is_null() {
            *value = Value::String("****".to_owned());
        }
    };
    for member in ["env", "headers"] {
        if let Some(Value::Object(map)) = entry.get_mut(member) {
            map.values_mut().for_each(hide);
        }
    }
    if let Some(Value::Object(oauth)) = entry.get_mut("oauth") {
        if let Some(secret) = oauth.get_mut("clientSecret") {
            hide(secret);
        }
    }
    entry
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_are_masked_and_variable_references_shown() {
        let entry = json!({"command": "x", "env": {"TOKEN": "s3cret", "REF": "${TOKEN}", "GONE": null},
            "headers": {"Authorization": "Bearer abc"}, "oauth": {"clientId": "id", "clientSecret": "shh"}});
        assert_eq!(
            masked(&entry),
            json!({"command": "x", "env": {"TOKEN": "****", "REF": "${TOKEN}", "GONE": null},
                "headers": {"Authorization": "****"}, "oauth": {"clientId": "id", "clientSecret": "****"}})
        );
    }

    #[test]
    fn add_builds_stdio_and_http_entries_and_refuses_mixed_flags() {
        let stdio = entry(
            Transport::Stdio,
            &["K=v=w".into()],
            &[],
            &["npx".into(), "-y".into(), "pkg".into()],
        )
        .unwrap();
        assert_eq!(
            stdio,
            json!({"command": "npx", "args": ["-y", "pkg"], "env": {"K": "v=w"}})
        );
        let http = entry(
            Transport::Http,
            &[],
            &["Authorization: Bearer ${T}".into()],
            &["https://x/mcp".into()],
        )
        .unwrap();
        assert_eq!(
            http,
            json!({"type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer ${T}"}})
        );
        assert!(entry(Transport::Stdio, &["novalue".into()], &[], &["x".into()]).is_err());
        assert!(entry(Transport::Http, &["K=v".into()], &[], &["https://x".into()]).is_err());
        assert!(entry(Transport::Http, &[], &["bad".into()], &["https://x".into()]).is_err());
        assert!(entry(Transport::Stdio, &[], &[], &[]).is_err());
    }
}
