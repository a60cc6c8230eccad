//! `junction serve NAME`: runs one of Junction's servers over this process's stdin and
//! stdout until stdin closes, or with `--http ADDR` over Streamable HTTP (`/mcp`, plus the
//! legacy `/sse` and `/message` endpoints) until Ctrl-C or SIGTERM. `--db PATH` keeps an
//! example server's data in that SQLite file, `--db postgres://...` in that PostgreSQL
//! database, which several instances can share (in memory otherwise); `--wire-log FILE` writes
//! every message received over stdio, one per line.
//!
//! With `--auth-issuer URL` the HTTP endpoint is an OAuth 2.1 resource server: every request
//! needs a bearer token issued by that authorization server for this server's URL
//! (`--auth-audience`, by default `http://ADDR/mcp`), checked as a JWT against the issuer's
//! JWKS or, with `--auth-introspect URL --auth-client ID:SECRET`, by token introspection;
//! `--auth-scope` names scopes every request needs (and the `401` challenge names them, so
//! a client asks for them at once); `--auth-method-scope METHOD=SCOPE` and
//! `--auth-tool-scope TOOL=SCOPE` add scopes that only the requests of one method, or the
//! calls of one tool, need: a token without them gets `403 insufficient_scope` naming every
//! scope the request needs, and the client steps up. The protected resource metadata,
//! listing every scope named, is served at `/.well-known/oauth-protected-resource/mcp`.
//! DPoP-bound tokens are always accepted with their proof; `--auth-dpop` accepts nothing
//! else (and the metadata says so), `--auth-dpop-nonce` also makes proofs carry a nonce
//! this server issued.
//!
//! With `--redis redis://HOST:PORT[/DB]` the HTTP sessions, their routing and their events
//! are shared through Redis with every other instance started with the same URL, so that
//! instances behind a load balancer serve any request of any session (docs/scale-out.md);
//! the server publishes its resource changes to every instance from its start, and its
//! 2025-11-25 tasks are answered on every instance (each runs on the one that created it).
//! Redis unreachable at start is an error; lost later, it is logged and reconnected.
//! `--state-key-file FILE` gives every instance the same key for 2026-07-28 `requestState`.

use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use clap::builder::{PossibleValue, PossibleValuesParser};
use junction::auth::resource::{IntrospectionVerifier, JwtVerifier, TokenVerifier};
use junction::auth::Url;
use junction::server::lifecycle::Kept;
use junction::server::Server;
use junction::transport::http::server::{
    BearerAuth, HttpServer, InMemoryEventStore, RedisLimits, RedisSessionStore, ResponseMode,
    DEFAULT_SESSION_EVENT_BYTES, DEFAULT_TOTAL_EVENT_BYTES,
};
use junction::transport::{stdio, tap, Connection, Limits};
use tokio::io::AsyncWrite;
use tokio::sync::oneshot;

/// The shortest `--state-key-file` secret accepted: HMAC-SHA256's block of entropy.
const MIN_STATE_KEY: usize = 32;

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
    /// `--stateless` is its former name.
    #[arg(long, requires = "http", alias = "stateless")]
    sessionless: bool,
    /// With --http: answer every request with an event stream, never a plain JSON body.
    #[arg(long, requires = "http")]
    sse_always: bool,
    /// The database to keep the server's data in, created and seeded when new: a SQLite
    /// file, or a `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` URL that several instances can
    /// share (the data stays in memory when this is not given).
    #[arg(long, value_name = "PATH|URL", value_parser = parse_db)]
    db: Option<junction_servers::Db>,
    /// Write every message the server receives to FILE, one JSON message per line (over
    /// HTTP, the messages of every session, each line whole).
    #[arg(long, value_name = "FILE")]
    wire_log: Option<PathBuf>,
    /// With --http: require bearer tokens issued by the authorization server with this
    /// issuer URL (JWTs checked against its JWKS unless --auth-introspect is given).
    #[arg(long, value_name = "URL", requires = "http")]
    auth_issuer: Option<String>,
    /// The audience tokens must name: this server's public URL (default http://ADDR/mcp).
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    auth_audience: Option<String>,
    /// Check tokens at this introspection endpoint (RFC 7662) instead of as JWTs.
    #[arg(long, value_name = "URL", requires_all = ["auth_issuer", "auth_client"])]
    auth_introspect: Option<String>,
    /// The client id and secret this server introspects with.
    #[arg(long, value_name = "ID:SECRET", requires = "auth_introspect")]
    auth_client: Option<String>,
    /// A scope every request needs (repeatable); named in the 401 challenge, so clients
    /// ask for it when they first authorize.
    #[arg(long, value_name = "SCOPE", requires = "auth_issuer")]
    auth_scope: Vec<String>,
    /// A scope the requests of one JSON-RPC method need, e.g. tools/call=tools (repeatable);
    /// a token without it gets 403 insufficient_scope naming it.
    #[arg(long, value_name = "METHOD=SCOPE", requires = "auth_issuer", value_parser = scope_rule)]
    auth_method_scope: Vec<(String, String)>,
    /// A scope calling one tool needs, e.g. delete_book=books:write (repeatable).
    #[arg(long, value_name = "TOOL=SCOPE", requires = "auth_issuer", value_parser = scope_rule)]
    auth_tool_scope: Vec<(String, String)>,
    /// Accept only DPoP-bound tokens (RFC 9449), each with a proof by its key; the
    /// protected resource metadata says so (dpop_bound_access_tokens_required).
    #[arg(long, requires = "auth_issuer")]
    auth_dpop: bool,
    /// DPoP proofs must carry a nonce this server issued (answered use_dpop_nonce with a
    /// DPoP-Nonce header otherwise).
    #[arg(long, requires = "auth_issuer")]
    auth_dpop_nonce: bool,
    /// With --http: the most connections served at once (default 512); one more gets 503.
    #[arg(long, value_name = "N", requires = "http")]
    max_connections: Option<usize>,
    /// With --http: the most live sessions (default 1024); beyond it the session idle the
    /// longest ends, or initialize gets 503 when all are busy. With --redis it also bounds
    /// the sessions of all instances together (give every instance the same).
    #[arg(long, value_name = "N", requires = "http")]
    max_sessions: Option<usize>,
    /// With --http: seconds a connection may take to send a request's headers, or stay idle
    /// between requests (default 10).
    #[arg(long, value_name = "SECS", requires = "http")]
    header_timeout: Option<u64>,
    /// With --http: seconds a session may stay idle before it ends (default 1800).
    #[arg(long, value_name = "SECS", requires = "http")]
    session_idle: Option<u64>,
    /// With --http: the largest request body in bytes (default 4 MiB); a larger one gets 413
    /// before it is read.
    #[arg(long, value_name = "BYTES", requires = "http")]
    max_body: Option<usize>,
    /// With --http: seconds a request's body may take to arrive after its headers (default
    /// 30); a slower one gets 408.
    #[arg(long, value_name = "SECS", requires = "http")]
    body_timeout: Option<u64>,
    /// With --http: the most bytes of events waiting for a client reading one stream
    /// (default 16 MiB); past it the stream is closed and the client resumes from the event
    /// store (the session ends where the revision cannot resume).
    #[arg(long, value_name = "BYTES", requires = "http")]
    max_queued: Option<usize>,
    /// With --http, without --redis: the most bytes of events kept for resumption per
    /// session (default 8 MiB); the oldest go first.
    #[arg(
        long,
        value_name = "BYTES",
        requires = "http",
        conflicts_with = "redis"
    )]
    event_session_bytes: Option<usize>,
    /// With --http, without --redis: the most bytes of events kept for resumption over all
    /// sessions (default 64 MiB); the oldest go first.
    #[arg(
        long,
        value_name = "BYTES",
        requires = "http",
        conflicts_with = "redis"
    )]
    event_total_bytes: Option<usize>,
    /// With --http: share sessions and streams with the other instances using this Redis
    /// (redis://HOST:PORT[/DB]).
    #[arg(
        long,
        value_name = "URL",
        requires = "http",
        conflicts_with = "sessionless"
    )]
    redis: Option<String>,
    /// With --redis: the most events Redis keeps per session, over all its streams (default
    /// 1024); older ones are dropped, and a client resuming from before them misses them.
    #[arg(long, value_name = "N", requires = "redis")]
    redis_session_events: Option<usize>,
    /// With --redis: the most bytes of events Redis keeps per session (default 8 MiB); the
    /// oldest go first, the newest always stays.
    #[arg(long, value_name = "BYTES", requires = "redis")]
    redis_session_bytes: Option<usize>,
    /// With --redis: seconds a stream's events stay in Redis after its last one (default
    /// 1800).
    #[arg(long, value_name = "SECS", requires = "redis")]
    redis_event_ttl: Option<u64>,
    /// The most bytes of each free-form capability member (`experimental`, `extensions`,
    /// unknown ones) of a client's `initialize` a session keeps (default 4096); a larger
    /// member is dropped.
    #[arg(long, value_name = "BYTES")]
    kept_capability_bytes: Option<usize>,
    /// The most bytes of each client name, title, version, description or website a session
    /// keeps (default 256); longer ones are cut.
    #[arg(long, value_name = "BYTES")]
    kept_info_bytes: Option<usize>,
    /// The most steps matching one URI against one resource template may take (default
    /// 100000); a URI that needs more does not match.
    #[arg(long, value_name = "N")]
    template_match_steps: Option<usize>,
    /// Sign the `requestState` of 2026-07-28 multi-round requests with the secret in FILE
    /// (at least 32 bytes) instead of a random per-process key: every instance behind one
    /// load balancer needs the same.
    #[arg(long, value_name = "FILE")]
    state_key_file: Option<PathBuf>,
}

fn parse_db(text: &str) -> Result<junction_servers::Db, String> {
    Ok(junction_servers::Db::parse(text))
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
    let kept = Kept::default();
    let options = junction_servers::Options {
        db: args.db.clone(),
        kept: Kept {
            capability_bytes: args.kept_capability_bytes.unwrap_or(kept.capability_bytes),
            info_bytes: args.kept_info_bytes.unwrap_or(kept.info_bytes),
        },
        template_match_steps: args.template_match_steps,
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
    if let Some(path) = &args.state_key_file {
        match std::fs::read(path) {
            Ok(secret) if secret.len() >= MIN_STATE_KEY => server.request_state_key(&secret),
            Ok(secret) => {
                eprintln!(
                    "junction serve: {}: the requestState key has {} bytes; it needs at least {MIN_STATE_KEY}",
                    path.display(),
                    secret.len()
                );
                return ExitCode::FAILURE;
            }
            Err(e) => {
                eprintln!("junction serve: cannot read {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
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
    let (stdin, stdout) = stdio::stdin_stdout();
    let (stdout, flushed) = SignalOnDrop::new(stdout);
    let connection = stdio::connect(stdin, stdout, Limits::default());
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
    let changes = server.clone();
    let mut http = HttpServer::new(move |connection| {
        server.serve(WireLog::tap(log.as_ref(), connection));
    });
    if args.sessionless {
        http = http.sessionless();
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
    if let Some(bytes) = args.max_body {
        http = http.max_body(bytes);
    }
    if let Some(secs) = args.body_timeout {
        http = http.body_timeout(std::time::Duration::from_secs(secs));
    }
    if let Some(bytes) = args.max_queued {
        http = http.max_queued(bytes);
    }
    if args.event_session_bytes.is_some() || args.event_total_bytes.is_some() {
        http = http.event_store(
            InMemoryEventStore::default()
                .max_session_bytes(
                    args.event_session_bytes
                        .unwrap_or(DEFAULT_SESSION_EVENT_BYTES),
                )
                .max_total_bytes(args.event_total_bytes.unwrap_or(DEFAULT_TOTAL_EVENT_BYTES)),
        );
    }
    if let Some(url) = &args.redis {
        let defaults = RedisLimits::default();
        let limits = RedisLimits {
            session_events: args.redis_session_events.unwrap_or(defaults.session_events),
            session_bytes: args.redis_session_bytes.unwrap_or(defaults.session_bytes),
            sessions: args.max_sessions.unwrap_or(defaults.sessions),
            event_ttl: args
                .redis_event_ttl
                .map_or(defaults.event_ttl, std::time::Duration::from_secs),
        };
        match RedisSessionStore::connect_with(url, "junction", limits).await {
            Ok(store) => {
                tracing::info!(redis = %url, "sharing sessions through Redis");
                http = http.session_store(store);
                if let Some(shared) = http.shared_changes() {
                    changes.share_changes(shared);
                }
                if let Some(tasks) = http.shared_tasks() {
                    changes.share_tasks(tasks);
                }
            }
            Err(e) => {
                eprintln!("junction serve: cannot use Redis at {url}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if !addr.ip().is_loopback() {
        tracing::warn!(%addr, "bound beyond loopback, but only loopback Host and Origin headers are accepted");
    }
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("junction serve: could not listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(issuer) = &args.auth_issuer {
        let bound = listener.local_addr().unwrap_or(addr);
        match bearer_auth(args, issuer, bound).await {
            Ok(auth) => http = http.authorization(auth),
            Err(e) => {
                eprintln!("junction serve: authorization: {e:#}");
                return ExitCode::FAILURE;
            }
        }
    }
    let running = match http.bind_listener(listener) {
        Ok(running) => running,
        Err(e) => {
            eprintln!("junction serve: could not serve on {addr}: {e}");
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

/// The bearer checks of `--auth-*`, for a server bound at `bound`.
async fn bearer_auth(
    args: &ServeArgs,
    issuer: &str,
    bound: SocketAddr,
) -> anyhow::Result<BearerAuth> {
    use anyhow::Context as _;
    let audience = args
        .auth_audience
        .clone()
        .unwrap_or_else(|| format!("http://{bound}/mcp"));
    let resource = Url::parse(&audience)
        .with_context(|| format!("--auth-audience {audience} is not a URL"))?;
    let verifier: Arc<dyn TokenVerifier> = match (&args.auth_introspect, &args.auth_client) {
        (Some(endpoint), Some(client)) => {
            let (id, secret) = client
                .split_once(':')
                .context("--auth-client must be ID:SECRET")?;
            let endpoint = Url::parse(endpoint)
                .with_context(|| format!("--auth-introspect {endpoint} is not a URL"))?;
            Arc::new(IntrospectionVerifier::new(endpoint, id, secret, &audience)?.issuer(issuer))
        }
        _ => Arc::new(
            JwtVerifier::discover(issuer, &audience)
                .await
                .with_context(|| format!("reading the metadata of {issuer}"))?,
        ),
    };
    tracing::info!(%issuer, %audience, "bearer tokens required");
    let mut auth = BearerAuth::new(&resource, vec![issuer.to_owned()], verifier)
        .required_scopes(args.auth_scope.clone());
    for (method, scopes) in grouped(&args.auth_method_scope) {
        auth = auth.method_scopes(method, scopes);
    }
    for (tool, scopes) in grouped(&args.auth_tool_scope) {
        auth = auth.tool_scopes(tool, scopes);
    }
    if args.auth_dpop {
        auth = auth.require_dpop();
    }
    if args.auth_dpop_nonce {
        auth = auth.dpop_nonces()?;
    }
    Ok(auth)
}

/// `NAME=SCOPE` of `--auth-method-scope` and `--auth-tool-scope`.
fn scope_rule(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, scope)) if !name.is_empty() && !scope.is_empty() && !scope.contains(' ') => {
            Ok((name.to_owned(), scope.to_owned()))
        }
        _ => Err(format!(
            "expected NAME=SCOPE (one scope, no spaces), got {text:?}"
        )),
    }
}

/// The scopes of each name, repeated flags joined.
fn grouped(rules: &[(String, String)]) -> std::collections::BTreeMap<&str, Vec<&str>> {
    let mut by_name = std::collections::BTreeMap::<&str, Vec<&str>>::new();
    for (name, scope) in rules {
        by_name.entry(name).or_default().push(scope);
    }
    by_name
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
    inner: stdio::Stdout,
    _done: oneshot::Sender<()>,
}

impl SignalOnDrop {
    fn new(inner: stdio::Stdout) -> (Self, oneshot::Receiver<()>) {
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
