//! `junction consent list|revoke`: the "always allow" answers kept across runs, shown and
//! taken back. The file is `--consent-file FILE` (pass the config's `junction.consentFile`
//! when it sets one), else `$XDG_CONFIG_HOME/junction/consent.json`.

use std::path::PathBuf;
use std::process::ExitCode;

use junction_host::display;
use junction_host::policy::{default_consent_file, Remembered};

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
}

/// Runs `junction consent`.
pub fn run(args: ConsentArgs) -> ExitCode {
    let Some(path) = args.consent_file.or_else(default_consent_file) else {
        eprintln!("junction consent: no consent file: set XDG_CONFIG_HOME or HOME, or pass --consent-file");
        return ExitCode::from(2);
    };
    let remembered = match Remembered::load(&path) {
        Ok(remembered) => remembered,
        Err(e) => {
            eprintln!("junction consent: {}", display::line(&e.to_string()));
            return ExitCode::FAILURE;
        }
    };
    match args.action {
        Action::List => {
            let all = remembered.list();
            if all.is_empty() {
                eprintln!("no remembered answers in {}", path.display());
            }
            for (server, tool) in all {
                println!("{} {}", display::name(&server), display::name(&tool));
            }
            ExitCode::SUCCESS
        }
        Action::Revoke { server, tool } => match remembered.remove(&server, &tool) {
            Ok(removed) if removed.is_empty() => {
                eprintln!(
                    "junction consent: no remembered answer matches `{}` `{}` in {}",
                    display::name(&server),
                    display::line(&tool),
                    path.display()
                );
                ExitCode::FAILURE
            }
            Ok(removed) => {
                for (server, tool) in removed {
                    println!(
                        "revoked {} {}",
                        display::name(&server),
                        display::name(&tool)
                    );
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("junction consent: {}", display::line(&e.to_string()));
                ExitCode::FAILURE
            }
        },
    }
}
