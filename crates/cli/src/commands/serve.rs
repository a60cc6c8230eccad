//! `junction serve NAME`: runs one of Junction's servers over this process's stdin and
//! stdout until stdin closes. `--db PATH` keeps an example server's data in that SQLite file
//! (in memory otherwise); `--wire-log FILE` writes every message received, one per line.

use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;
use std::task::{Context, Poll};
use std::time::Duration;

use clap::builder::{PossibleValue, PossibleValuesParser};
use junction::transport::{stdio, tap, Limits};
use tokio::io::{AsyncWrite, Stdout};
use tokio::sync::oneshot;

/// How long queued messages may take to reach stdout once the session has ended.
const FLUSH_GRACE: Duration = Duration::from_secs(5);

/// The arguments of `junction serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The server to run.
    #[arg(value_name = "NAME", value_parser = server_names())]
    name: String,
    /// The SQLite database to keep the server's data in, created and seeded when new (the
    /// data stays in memory when this is not given).
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Write every message the server receives to FILE, one JSON message per line.
    #[arg(long, value_name = "FILE")]
    wire_log: Option<PathBuf>,
}

fn server_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        junction_servers::registry()
            .iter()
            .map(|entry| PossibleValue::new(entry.name).help(entry.summary)),
    )
}

/// Serves until the client closes stdin.
pub async fn run(args: ServeArgs) -> ExitCode {
    let Some(entry) = junction_servers::find(&args.name) else {
        // clap only lets registered names through; this guards a registry that changed.
        eprintln!("junction serve: unknown server `{}`", args.name);
        return ExitCode::from(2);
    };
    let options = junction_servers::Options { db: args.db };
    let server = match (entry.build)(&options) {
        Ok(server) => server,
        Err(e) => {
            eprintln!(
                "junction serve: the `{}` server cannot start: {e}",
                entry.name
            );
            return ExitCode::FAILURE;
        }
    };
    let (stdout, flushed) = SignalOnDrop::new(tokio::io::stdout());
    let mut connection = stdio::connect(tokio::io::stdin(), stdout, Limits::default());
    if let Some(path) = &args.wire_log {
        match tokio::fs::File::create(path).await {
            Ok(file) => connection = tap::tap(connection, file),
            Err(e) => {
                eprintln!(
                    "junction serve: cannot write the wire log {}: {e}",
                    path.display()
                );
                return ExitCode::FAILURE;
            }
        }
    }
    tracing::info!(server = entry.name, "serving over stdio");
    let peer = server.serve(connection);
    peer.closed().await;
    // The writer task owns stdout and drops it after writing what was queued.
    if tokio::time::timeout(FLUSH_GRACE, flushed).await.is_err() {
        tracing::warn!("stdout did not drain in time; some messages may be lost");
    }
    tracing::info!(server = entry.name, "stdin closed; exiting");
    ExitCode::SUCCESS
}

/// Stdout that tells, by being dropped, that the transport's writer is done with it.
struct SignalOnDrop {
    inner: Stdout,
    _done: oneshot::Sender<()>,
}

impl SignalOnDrop {
    fn new(inner: Stdout) -> (Self, oneshot::Receiver<()>) {
        let (done, rx) = oneshot::channel();
        (SignalOnDrop { inner, _done: done }, rx)
    }
}

impl AsyncWrite for SignalOnDrop {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
