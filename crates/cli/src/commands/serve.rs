//! `junction serve NAME`: runs one of Junction's servers over this process's stdin and
//! stdout until stdin closes, or with `--http ADDR` over Streamable HTTP (`/mcp`, plus the
//! legacy `/sse` and `/message` endpoints) until Ctrl-C or SIGTERM. `--db PATH` keeps an
//! example server's data in that SQLite file (in memory otherwise); `--wire-log FILE` writes
//! every message received over stdio, one per line.

use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use clap::builder::{PossibleValue, PossibleValuesParser};
use junction::server::Server;
use junction::transport::http::server::{HttpServer, ResponseMode};
use junction::transport::{stdio, tap, Connection, Limits};
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
    /// Serve Streamable HTTP at http://ADDR/mcp (and the legacy /sse) instead of stdio.
    /// ADDR is HOST:PORT or a PORT on 127.0.0.1; port 0 picks a free one. Prints
    /// `listening on http://ADDR/mcp` once bound. Only loopback Host/Origin headers are
    /// accepted.
    #[arg(long, value_name = "ADDR", value_parser = parse_addr)]
    http: Option<SocketAddr>,
    /// With --http: no sessions; each POST is served on its own (no server→client requests).
    #[arg(long, requires = "http")]
    stateless: bool,
    /// With --http: answer every request with an event stream, never a plain JSON body.
    #[arg(long, requires = "http")]
    sse_always: bool,
    /// The SQLite database to keep the server's data in, created and seeded when new (the
    /// data stays in memory when this is not given).
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Write every message the server receives to FILE, one JSON message per line (over
    /// HTTP, the messages of every session, each line whole).
    #[arg(long, value_name = "FILE")]
    wire_log: Option<PathBuf>,
    /// With --http: the most connections served at once (default 512); one more gets 503.
    #[arg(long, value_name = "N", requires = "http")]
    max_connections: Option<usize>,
    /// With --http: the most live sessions (default 1024); beyond it the session idle the
    /// longest ends, or initialize gets 503 when all are busy.
    #[arg(long, value_name = "N", requires = "http")]
    max_sessions: Option<usize>,
    /// With --http: seconds a connection may take to send a request's headers, or stay idle
    /// between requests (default 10).
    #[arg(long, value_name = "SECS", requires = "http")]
    header_timeout: Option<u64>,
    /// With --http: seconds a session may stay idle before it ends (default 1800).
    #[arg(long, value_name = "SECS", requires = "http")]
    session_idle: Option<u64>,
}

fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    text.parse()
        .map_err(|_| format!("expected HOST:PORT (e.g. 127.0.0.1:0) or a port, got `{text}`"))
}

fn server_names() -> PossibleValuesParser {
    PossibleValuesParser::new(
        junction_servers::registry()
            .iter()
            .map(|entry| PossibleValue::new(entry.name).help(entry.summary)),
    )
}

/// Serves until the client closes stdin (stdio) or the process is told to stop (HTTP).
pub async fn run(args: ServeArgs) -> ExitCode {
    let Some(entry) = junction_servers::find(&args.name) else {
        // clap only lets registered names through; this guards a registry that changed.
        eprintln!("junction serve: unknown server `{}`", args.name);
        return ExitCode::from(2);
    };
    // Built even when each HTTP session gets its own, so a misdefinition fails at once.
    let options = junction_servers::Options {
        db: args.db.clone(),
    };
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
    let log = match args.wire_log.as_deref().map(WireLog::create).transpose() {
        Ok(log) => log,
        Err(e) => {
            eprintln!("junction serve: cannot write the wire log: {e}");
            return ExitCode::FAILURE;
        }
    };
    match args.http {
        Some(addr) => serve_http(entry, server, addr, &args, log).await,
        None => serve_stdio(entry, server, log).await,
    }
}

/// The wire log file, shared by every session of this process. Each frame reaches it as one
/// `write_all` of a whole line under the lock, so lines of concurrent sessions never mix.
#[derive(Clone)]
struct WireLog(Arc<Mutex<std::fs::File>>);

impl WireLog {
    fn create(path: &std::path::Path) -> io::Result<WireLog> {
        let file = std::fs::File::create(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        Ok(WireLog(Arc::new(Mutex::new(file))))
    }

    /// Logs what `connection` receives, when there is a log.
    fn tap(log: Option<&WireLog>, connection: Connection) -> Connection {
        match log {
            Some(log) => tap::tap(connection, log.clone()),
            None => connection,
        }
    }
}

impl AsyncWrite for WireLog {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        // A line is small and the file local: writing it in place is cheaper than a thread hop.
        let mut file = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Poll::Ready(file.write_all(buf).map(|()| buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut file = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Poll::Ready(file.flush())
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

async fn serve_stdio(
    entry: &junction_servers::Entry,
    server: Server,
    log: Option<WireLog>,
) -> ExitCode {
    let (stdout, flushed) = SignalOnDrop::new(tokio::io::stdout());
    let connection = stdio::connect(tokio::io::stdin(), stdout, Limits::default());
    let connection = WireLog::tap(log.as_ref(), connection);
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

async fn serve_http(
    entry: &'static junction_servers::Entry,
    server: Server,
    addr: SocketAddr,
    args: &ServeArgs,
    log: Option<WireLog>,
) -> ExitCode {
    let mut http = match entry.build_for_http_session {
        // A server that steers its streams gets a new instance, with its control, per session.
        Some(build) => HttpServer::with_control(move |connection, control| match build(control) {
            Ok(server) => {
                server.serve(WireLog::tap(log.as_ref(), connection));
            }
            Err(e) => {
                tracing::error!(server = entry.name, error = %e, "could not build a session's server")
            }
        }),
        None => HttpServer::new(move |connection| {
            server.serve(WireLog::tap(log.as_ref(), connection));
        }),
    };
    if args.stateless {
        http = http.stateless();
    }
    if args.sse_always {
        http = http.response_mode(ResponseMode::AlwaysSse);
    }
    if let Some(n) = args.max_connections {
        http = http.max_connections(n);
    }
    if let Some(n) = args.max_sessions {
        http = http.max_sessions(n);
    }
    if let Some(secs) = args.header_timeout {
        http = http.header_timeout(std::time::Duration::from_secs(secs));
    }
    if let Some(secs) = args.session_idle {
        http = http.idle_timeout(std::time::Duration::from_secs(secs));
    }
    if !addr.ip().is_loopback() {
        tracing::warn!(%addr, "bound beyond loopback, but only loopback Host and Origin headers are accepted");
    }
    let running = match http.bind(addr).await {
        Ok(running) => running,
        Err(e) => {
            eprintln!("junction serve: could not listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The one line on stdout: how a script learns the port when 0 was asked for.
    println!("listening on {}", running.url("/mcp"));
    tracing::info!(server = entry.name, addr = %running.local_addr(), "serving over HTTP");
    match shutdown_signal().await {
        Ok(signal) => tracing::info!(signal, "stopping"),
        Err(e) => {
            eprintln!("junction serve: could not wait for a stop signal: {e}");
            return ExitCode::FAILURE;
        }
    }
    drop(running);
    ExitCode::SUCCESS
}

/// Waits for Ctrl-C or SIGTERM and names the one that came.
async fn shutdown_signal() -> io::Result<&'static str> {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result.map(|()| "interrupt"),
        _ = terminate.recv() => Ok("terminate"),
    }
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
