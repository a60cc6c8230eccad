//! Logs to stderr: the level of `-v` if given, else `RUST_LOG`, else warnings only.

use tracing_subscriber::filter::{EnvFilter, LevelFilter};

/// Installs the stderr subscriber. `verbose` counts `-v` flags.
pub fn init(verbose: u8) {
    let filter = match verbose {
        0 => EnvFilter::builder()
            .with_default_directive(LevelFilter::WARN.into())
            .from_env_lossy(),
        1 => EnvFilter::new("info"),
        2 => EnvFilter::new("debug"),
        _ => EnvFilter::new("trace"),
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}
