//! `junction consent list|revoke|pins|unpin`: the "always allow" answers and the tool pins
//! kept across runs, shown and taken back. The answers are in `--consent-file FILE` (pass
//! the config's `junction.consentFile` when it sets one), else
//! `$XDG_CONFIG_HOME/junction/consent.json`; the pins (the definition each tool was last
//! allowed in) in `$XDG_CONFIG_HOME/junction/pins.json`.

use std::path::PathBuf;
use std::process::ExitCode;

use junction_host::display;
use junction_host::policy::{default_consent_file, default_pins_file, Pins, Remembered};

/// The arguments of `junction consent`.
#[derive(Debug, clap::Args)]
pub struct ConsentArgs {
    #[command(subcommand)]
    action: Action,
    /// The file of answers [default: $XDG_CONFIG_HOME/junction/consent.json].
    #[arg(long, value_name = "FILE", global = true)]
    consent_file: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Every remembered answer, one `server tool` per line.
    List,
    /// Take back the answers for SERVER's tools matching TOOL (a glob; every tool when left
    /// out): those tools are asked about again.
    Revoke {
        /// The server's key in the config.
        server: String,
        /// A tool name or glob.
        #[arg(default_value = "*")]
        tool: String,
    },
    /// Every pinned tool (one whose later change asks again), one `server tool sha256` per
    /// line.
    Pins,
    /// Drop the pins of SERVER's tools matching TOOL (a glob; every tool when left out):
    /// each is pinned again as it is at its next allowed call, without asking about a
    /// change (the rules and answers still decide whether it is allowed).
    Unpin {
        /// The server's key in the config.
        server: String,
        /// A tool name or glob.
        #[arg(default_value = "*")]
        tool: String,
    },
}

/// Runs `junction consent`.
pub fn run(args: ConsentArgs) -> ExitCode {
    match args.action {
        Action::List | Action::Revoke { .. } => answers(args.action, args.consent_file),
        Action::Pins | Action::Unpin { .. } => pins(args.action),
    }
}

fn answers(action: Action, file: Option<PathBuf>) -> ExitCode {
    let Some(path) = file.or_else(default_consent_file) else {
        eprintln!("junction consent: no consent file: set XDG_CONFIG_HOME or HOME, or pass --consent-file");
        return ExitCode::from(2);
    };
    let remembered = match Remembered::load(&path) {
        Ok(remembered) => remembered,
        Err(e) => return failed(&e.to_string()),
    };
    match action {
        Action::Revoke { server, tool } => match remembered.remove(&server, &tool) {
            Ok(removed) => taken_back(
                removed,
                "revoked",
                "remembered answer",
                &server,
                &tool,
                &path,
            ),
            Err(e) => failed(&e.to_string()),
        },
        _ => {
            let all = remembered.list();
            if all.is_empty() {
                eprintln!("no remembered answers in {}", path.display());
            }
            for (server, tool) in all {
                println!("{} {}", display::name(&server), display::name(&tool));
            }
            ExitCode::SUCCESS
        }
    }
}

fn pins(action: Action) -> ExitCode {
    let Some(path) = default_pins_file() else {
        eprintln!("junction consent: no pins file: set XDG_CONFIG_HOME or HOME");
        return ExitCode::from(2);
    };
    let pins = match Pins::load(&path) {
        Ok(pins) => pins,
        Err(e) => return failed(&e.to_string()),
    };
    match action {
        Action::Unpin { server, tool } => match pins.remove(&server, &tool) {
            Ok(removed) => taken_back(removed, "unpinned", "pin", &server, &tool, &path),
            Err(e) => failed(&e.to_string()),
        },
        _ => {
            let all = pins.list();
            if all.is_empty() {
                eprintln!("no pinned tools in {}", path.display());
            }
            for (server, tool, hash) in all {
                println!("{} {} {hash}", display::name(&server), display::name(&tool));
            }
            ExitCode::SUCCESS
        }
    }
}

/// Prints what was taken back, or fails when nothing matched.
fn taken_back(
    removed: Vec<(String, String)>,
    done: &str,
    what: &str,
    server: &str,
    tool: &str,
    path: &std::path::Path,
) -> ExitCode {
    if removed.is_empty() {
        eprintln!(
            "junction consent: no {what} matches `{}` `{}` in {}",
            display::name(server),
            display::line(tool),
            path.display()
        );
        return ExitCode::FAILURE;
    }
    for (server, tool) in removed {
        println!("{done} {} {}", display::name(&server), display::name(&tool));
    }
    ExitCode::SUCCESS
}

fn failed(error: &str) -> ExitCode {
    eprintln!("junction consent: {}", display::line(error));
    ExitCode::FAILURE
}
