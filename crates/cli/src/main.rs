//! `junction`: Junction's command line.
//!
//! - `junction serve NAME` runs one of Junction's servers over stdio (or `--http ADDR`).
//! - `junction call [OPTIONS] -- COMMAND ARGS...` starts any MCP server over stdio (or
//!   `junction call URL [OPTIONS]` reaches one over HTTP), runs one method and prints its
//!   result as JSON.
//! - `junction chat` talks with a model over the configured servers; `junction run` plays
//!   one turn without a person and prints the transcript.
//! - `junction mcp add|add-json|remove|list|get` edits and shows the configured servers
//!   (the user's `$XDG_CONFIG_HOME/junction/mcp.json`, the project's `.mcp.json`).
//! - `junction auth login|logout|status [SERVER]` manages the OAuth credentials kept for
//!   HTTP servers.
//! - `junction demo` runs the example servers, a scripted conversation and its checks, offline.
//! - `junction completions bash|zsh|fish` prints a shell completion script.
//! - `junction conformance-client URL` (hidden) is the client under test of the MCP
//!   conformance suite.
//!
//! Logs go to stderr through `tracing`, at the level of `-v` (info, `-vv` debug, `-vvv`
//! trace) or else of `RUST_LOG` (warnings by default); stdout carries only protocol (for
//! `serve`) or the result (for `call`).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod commands;
mod logging;
mod render;
mod signals;
mod terminal;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use commands::{auth, call, chat, conformance_client, consent, demo, mcp, run, serve};

/// Junction: a Model Context Protocol stack.
#[derive(Debug, Parser)]
#[command(name = "junction", version, about, propagate_version = true)]
struct Cli {
    /// More logs on stderr: -v info (with the server's stderr, for `call`), -vv debug, -vvv trace.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one of Junction's servers over stdio, or over HTTP with --http.
    Serve(Box<serve::ServeArgs>),
    /// Reach an MCP server (a command over stdio, or a URL over HTTP), run one method and
    /// print its result as JSON.
    Call(Box<call::CallArgs>),
    /// Talk with a model over the configured servers (a REPL).
    Chat(chat::ChatArgs),
    /// One turn without a person: send MESSAGE, print the transcript.
    Run(run::RunArgs),
    /// The configured servers: add, add-json, remove, list, get.
    Mcp(mcp::McpArgs),
    /// The "always allow" answers kept across runs: list, revoke.
    Consent(consent::ConsentArgs),
    /// The OAuth credentials kept for HTTP servers: login, logout, status.
    Auth(auth::AuthArgs),
    /// The whole host offline: three example servers, a scripted conversation, checks.
    Demo(demo::DemoArgs),
    /// Print a completion script for SHELL (e.g. `junction completions bash >
    /// ~/.local/share/bash-completion/completions/junction`).
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// The client under test of the MCP conformance suite (run by `conformance client`).
    #[command(hide = true)]
    ConformanceClient(conformance_client::ConformanceClientArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    if let Command::Completions { shell } = cli.command {
        clap_complete::generate(
            shell,
            &mut Cli::command(),
            "junction",
            &mut std::io::stdout(),
        );
        return ExitCode::SUCCESS;
    }
    logging::init(cli.verbose);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("junction: could not start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Command::Serve(args) => runtime.block_on(serve::run(*args)),
        Command::Call(args) => runtime.block_on(call::run(*args)),
        Command::Chat(args) => runtime.block_on(chat::run(args)),
        Command::Run(args) => runtime.block_on(run::run(args)),
        Command::Demo(args) => runtime.block_on(demo::run(args)),
        Command::Auth(args) => runtime.block_on(auth::run(args)),
        Command::Consent(args) => consent::run(args),
        Command::Mcp(args) => runtime.block_on(mcp::run(args)),
        Command::ConformanceClient(args) => runtime.block_on(conformance_client::run(args)),
        Command::Completions { .. } => ExitCode::SUCCESS,
    }
}

/// Prints clap's message. Usage errors exit 2, except under `call`, whose 2 means a tool
/// error: there they exit [`render::FAILURE`].
fn usage_error(error: &clap::Error) -> ExitCode {
    let _ = error.print();
    if !error.use_stderr() {
        return ExitCode::SUCCESS;
    }
    let subcommand = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if subcommand.as_deref() == Some("call") {
        ExitCode::from(render::FAILURE)
    } else {
        ExitCode::from(2)
    }
}
