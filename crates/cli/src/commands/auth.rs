//! `junction auth login|logout|status [SERVER]`: the OAuth credentials Junction keeps for
//! HTTP servers (in the user's credential file, mode 0600, shared by `chat`, `run` and
//! `call`).
//!
//! SERVER is the name of an `http` server of the config (`--config`, else `./.mcp.json`) or
//! a URL; without it, every `http` server of the config. `login` runs the authorization flow
//! now (the URL is printed and opened in the browser), `logout` forgets the tokens, `status`
//! says what is stored. Exits 0 on success, 1 when a login failed, 2 on bad usage.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use junction::auth::OAuthClient;
use junction_host::auth::{describe, oauth_client, user_store, OAuthSettings};
use junction_host::config::{Config, TransportConfig};
use junction_host::display;

use super::host_options::DEFAULT_CONFIG;

/// The arguments of `junction auth`.
#[derive(Debug, clap::Args)]
pub struct AuthArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Authorize now with the server's authorization server.
    Login(Target),
    /// Forget the server's tokens.
    Logout(Target),
    /// Say what is stored for each server.
    Status(Target),
}

#[derive(Debug, clap::Args)]
struct Target {
    /// A server of the config, or an http(s) URL [default: every http server of the config].
    #[arg(value_name = "SERVER")]
    server: Option<String>,
    /// The config file [default: ./.mcp.json].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

/// Runs the action.
pub async fn run(args: AuthArgs) -> ExitCode {
    let (action, target) = match &args.action {
        Action::Login(t) => ("login", t),
        Action::Logout(t) => ("logout", t),
        Action::Status(t) => ("status", t),
    };
    let servers = match servers(target) {
        Ok(servers) => servers,
        Err(e) => {
            eprintln!("junction auth: {e}");
            return ExitCode::from(2);
        }
    };
    let store = user_store();
    let mut code = ExitCode::SUCCESS;
    for (name, url, settings) in servers {
        // The authorization server's words (error descriptions, issuer, scopes) and a
        // project config's server names are shown escaped, as everywhere else.
        let name = display::name(&name);
        let client: std::sync::Arc<OAuthClient> =
            match oauth_client(&url, settings.as_ref(), store.clone()) {
                Ok(client) => client,
                Err(e) => {
                    eprintln!("junction auth: {name}: {}", display::line(&e.to_string()));
                    code = ExitCode::FAILURE;
                    continue;
                }
            };
        match action {
            "login" => match client.login().await {
                Ok(()) => println!("{name}: authorized"),
                Err(e) => {
                    eprintln!("junction auth: {name}: {}", display::line(&e.to_string()));
                    code = ExitCode::FAILURE;
                }
            },
            "logout" => match client.logout() {
                Ok(true) => println!("{name}: credentials removed"),
                Ok(false) => println!("{name}: nothing was stored"),
                Err(e) => {
                    eprintln!("junction auth: {name}: {}", display::line(&e.to_string()));
                    code = ExitCode::FAILURE;
                }
            },
            _ => println!(
                "{name}: {}",
                display::line(&describe(client.status().as_ref()))
            ),
        }
    }
    code
}

/// The servers the target names: (name, URL, `oauth` settings).
fn servers(target: &Target) -> anyhow::Result<Vec<(String, String, Option<OAuthSettings>)>> {
    if let Some(url) = target
        .server
        .as_deref()
        .filter(|s| s.starts_with("http://") || s.starts_with("https://"))
    {
        return Ok(vec![(url.to_owned(), url.to_owned(), None)]);
    }
    let path = match &target.config {
        Some(path) => path.clone(),
        None if Path::new(DEFAULT_CONFIG).is_file() => PathBuf::from(DEFAULT_CONFIG),
        None => {
            anyhow::bail!("no config: pass --config FILE, create ./{DEFAULT_CONFIG}, or give a URL")
        }
    };
    let config = Config::load(&path)?;
    let http: Vec<_> = config
        .servers
        .iter()
        .filter(|s| target.server.as_deref().is_none_or(|name| s.name == name))
        .filter_map(|s| match &s.transport {
            TransportConfig::Http(h) => Some((s.name.clone(), h.url.clone(), h.oauth.clone())),
            _ => None,
        })
        .collect();
    match (&target.server, http.is_empty()) {
        (Some(name), true) => anyhow::bail!("{}: no http server named `{name}`", path.display()),
        (None, true) => anyhow::bail!("{}: no http servers", path.display()),
        _ => Ok(http),
    }
}
