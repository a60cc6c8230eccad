//! The workloads: what each one sends, to which kind of server, and what it reports.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context as _};
use tokio::task::JoinSet;

use crate::http::Connection;
use crate::stats::Sample;
use crate::stdio::{self, StdioServer};
use crate::subject::{self, HttpMode, HttpServer, Subject};
use crate::wire::{self, Family, Verdict};
use crate::{Budget, Config};

/// One workload of the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// stdio after a handshake, `inflight` calls at a time; `family` Stateless skips the
    /// handshake and sends 2026-07-28 requests.
    Stdio { inflight: usize, family: Family },
    /// HTTP with `sessions` sessions (one connection and one call in flight each).
    Sessions { sessions: usize, sse: bool },
    /// HTTP without sessions, `clients` connections with one call in flight each.
    Sessionless { clients: usize, family: Family },
    /// Memory per idle HTTP session.
    IdleSession,
    /// Spawn to the first echo over stdio.
    ColdStart,
}

/// Every workload, in table order.
pub const ALL: [Workload; 11] = [
    Workload::Stdio {
        inflight: 1,
        family: Family::Handshake,
    },
    Workload::Stdio {
        inflight: 32,
        family: Family::Handshake,
    },
    Workload::Stdio {
        inflight: 32,
        family: Family::Stateless,
    },
    Workload::Sessions {
        sessions: 1,
        sse: false,
    },
    Workload::Sessions {
        sessions: 32,
        sse: false,
    },
    Workload::Sessions {
        sessions: 32,
        sse: true,
    },
    Workload::Sessionless {
        clients: 1,
        family: Family::Handshake,
    },
    Workload::Sessionless {
        clients: 1,
        family: Family::Stateless,
    },
    Workload::Sessionless {
        clients: 32,
        family: Family::Stateless,
    },
    Workload::IdleSession,
    Workload::ColdStart,
];

/// What one run of a workload measured.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The calls, for throughput workloads.
    pub sample: Option<Sample>,
    /// Other figures by name (`rss_idle_kib`, `kib_per_session`, `cold_start_ms`, ...).
    pub figures: Vec<(&'static str, f64)>,
}

impl Workload {
    /// The name in tables, JSON and `--only`.
    pub fn name(self) -> String {
        let tag = |f: Family| if f == Family::Stateless { "-2026" } else { "" };
        match self {
            Workload::Stdio { inflight, family } => format!("stdio{}-c{inflight}", tag(family)),
            Workload::Sessions { sessions, sse } => {
                format!("http-s{sessions}-{}", if sse { "sse" } else { "json" })
            }
            Workload::Sessionless {
                clients,
                family: Family::Handshake,
            } => format!("http-sessionless-c{clients}"),
            Workload::Sessionless { clients, .. } => format!("http-2026-c{clients}"),
            Workload::IdleSession => "http-idle-session".to_owned(),
            Workload::ColdStart => "cold-start".to_owned(),
        }
    }

    /// The names of every workload.
    pub fn names() -> Vec<String> {
        ALL.iter().map(|w| w.name()).collect()
    }

    /// Whether `subject` can run this workload at all (`None`: it can; `Some`: why not).
    pub fn skip_reason(self, subject: &Subject) -> Option<&'static str> {
        let family = match self {
            Workload::Stdio { family, .. } | Workload::Sessionless { family, .. } => family,
            _ => Family::Handshake,
        };
        if family == Family::Stateless && !subject.speaks_2026() {
            return Some("does not speak 2026-07-28");
        }
        let http = matches!(
            self,
            Workload::Sessions { .. } | Workload::Sessionless { .. } | Workload::IdleSession
        );
        if http && subject.http(0, HttpMode::Sessionless).is_none() {
            return Some("stdio only");
        }
        None
    }

    /// Runs once against `subject`.
    pub async fn run(self, subject: &Subject, config: &Config) -> anyhow::Result<Outcome> {
        match self {
            Workload::Stdio { inflight, family } => {
                run_stdio(subject, config, inflight, family).await
            }
            Workload::Sessions { sessions, sse } => {
                let server = start(subject, HttpMode::Sessions { sse }).await?;
                let sample = http_load(server.addr, config, sessions, Route::Session).await?;
                Ok(Outcome {
                    sample: Some(sample),
                    figures: Vec::new(),
                })
            }
            Workload::Sessionless { clients, family } => {
                let server = start(subject, HttpMode::Sessionless).await?;
                let sample =
                    http_load(server.addr, config, clients, Route::Sessionless(family)).await?;
                Ok(Outcome {
                    sample: Some(sample),
                    figures: Vec::new(),
                })
            }
            Workload::IdleSession => idle_sessions(subject, config).await,
            Workload::ColdStart => cold_starts(subject, config).await,
        }
    }
}

async fn run_stdio(
    subject: &Subject,
    config: &Config,
    inflight: usize,
    family: Family,
) -> anyhow::Result<Outcome> {
    let launch = subject.stdio().context("no stdio server")?;
    let mut server = StdioServer::spawn(&launch)?;
    if family == Family::Handshake {
        server.handshake().await?;
    }
    let pid = server.pid().context("the server exited")?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let idle = subject::rss_kib(pid)?;
    server.load(config.warm, inflight, family, 1).await?;
    let sample = server
        .load(config.measure, inflight, family, 1_000_000_000)
        .await?;
    let after = subject::rss_kib(pid)?;
    server.close().await;
    // Without a handshake, "idle" would be read before the server finished starting.
    let figures = match family {
        Family::Handshake => vec![
            ("rss_idle_kib", idle as f64),
            ("rss_after_kib", after as f64),
        ],
        Family::Stateless => Vec::new(),
    };
    Ok(Outcome {
        sample: Some(sample),
        figures,
    })
}

async fn start(subject: &Subject, mode: HttpMode) -> anyhow::Result<HttpServer> {
    HttpServer::start(subject, mode)
        .await?
        .context("no HTTP server")
}

/// Where a worker's calls go.
#[derive(Clone, Copy)]
enum Route {
    /// Its own session, opened with a handshake.
    Session,
    /// No session; 2025-11-25 requests with the version header, or 2026-07-28 requests.
    Sessionless(Family),
}

/// `workers` connections at once, each with one call in flight, until the budget is spent.
async fn http_load(
    addr: SocketAddr,
    config: &Config,
    workers: usize,
    route: Route,
) -> anyhow::Result<Sample> {
    let mut set = JoinSet::new();
    let share = |budget: Budget| Budget {
        calls: budget.calls.div_ceil(workers as u64),
        time: budget.time,
    };
    for worker in 0..workers {
        let (warm, measure) = (share(config.warm), share(config.measure));
        set.spawn(async move {
            let mut connection = Connection::new(addr);
            let headers = open(&mut connection, route).await?;
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
            let family = match route {
                Route::Sessionless(family) => family,
                Route::Session => Family::Handshake,
            };
            let first = 1 + worker as u64 * 1_000_000_000;
            calls(&mut connection, &headers, family, warm, first).await?;
            calls(
                &mut connection,
                &headers,
                family,
                measure,
                first + 500_000_000,
            )
            .await
        });
    }
    let mut total = Sample::default();
    while let Some(done) = set.join_next().await {
        total.merge(done??);
    }
    Ok(total)
}

/// Opens the worker's session if it has one; returns the headers of its calls.
async fn open(
    connection: &mut Connection,
    route: Route,
) -> anyhow::Result<Vec<(&'static str, String)>> {
    Ok(match route {
        Route::Session => {
            let session = handshake(connection).await?;
            let mut headers = vec![("mcp-protocol-version", wire::HANDSHAKE_VERSION.to_owned())];
            headers.extend(session.map(|s| ("mcp-session-id", s)));
            let reply = connection
                .post(
                    &headers
                        .iter()
                        .map(|(n, v)| (*n, v.as_str()))
                        .collect::<Vec<_>>(),
                    wire::initialized().as_bytes(),
                )
                .await?;
            if !(200..300).contains(&reply.status) {
                bail!("notifications/initialized answered {}", reply.status);
            }
            headers
        }
        Route::Sessionless(Family::Handshake) => {
            vec![("mcp-protocol-version", wire::HANDSHAKE_VERSION.to_owned())]
        }
        Route::Sessionless(Family::Stateless) => vec![
            ("mcp-protocol-version", wire::STATELESS_VERSION.to_owned()),
            ("mcp-method", "tools/call".to_owned()),
            ("mcp-name", "echo".to_owned()),
        ],
    })
}

/// POSTs `initialize`; returns the session id the server gave.
async fn handshake(connection: &mut Connection) -> anyhow::Result<Option<String>> {
    let reply = connection.post(&[], wire::initialize().as_bytes()).await?;
    let answered = reply.messages.iter().any(|m| {
        serde_json::from_slice::<serde_json::Value>(m)
            .is_ok_and(|v| v.get("id") == Some(&serde_json::json!(0)) && v.get("result").is_some())
    });
    if reply.status != 200 || !answered {
        bail!(
            "initialize answered {} with {:?}",
            reply.status,
            reply.messages.first().map(|m| wire::lossy(m))
        );
    }
    Ok(reply.session)
}

/// One call at a time on `connection` until `budget` is spent.
async fn calls(
    connection: &mut Connection,
    headers: &[(&str, &str)],
    family: Family,
    budget: Budget,
    first: u64,
) -> anyhow::Result<Sample> {
    let mut sample = Sample::default();
    let mut body = Vec::with_capacity(512);
    let start = std::time::Instant::now();
    let deadline = start + budget.time;
    let mut id = first;
    while id - first < budget.calls && std::time::Instant::now() < deadline {
        body.clear();
        wire::call(&mut body, id, family);
        let sent = std::time::Instant::now();
        let reply = connection.post(headers, &body).await?;
        let latency = sent.elapsed();
        let mut answered = false;
        for message in &reply.messages {
            match wire::judge(message) {
                Verdict::Answer { id: got, matched } if got == id => {
                    answered = true;
                    sample.answer(latency, matched, || wire::lossy(message));
                }
                Verdict::Answer { .. } | Verdict::Other => {}
                Verdict::Error(e) => {
                    answered = true;
                    sample.answer(latency, false, || e);
                }
            }
        }
        if !answered {
            sample.answer(latency, false, || {
                format!(
                    "HTTP {} without the answer to {id}: {:?}",
                    reply.status,
                    reply.messages.first().map(|m| wire::lossy(m))
                )
            });
        }
        id += 1;
    }
    sample.elapsed = start.elapsed();
    Ok(sample)
}

/// Opens sessions and leaves them idle; the growth of the server's RSS per session.
async fn idle_sessions(subject: &Subject, config: &Config) -> anyhow::Result<Outcome> {
    let server = start(subject, HttpMode::Sessions { sse: false }).await?;
    let pid = server.pid().context("the server exited")?;
    let mut connection = Connection::new(server.addr);
    // Warm the allocator and the server's lazy state before the baseline.
    for _ in 0..20 {
        open(&mut connection, Route::Session).await?;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = subject::rss_kib(pid)?;
    for _ in 0..config.idle_sessions {
        open(&mut connection, Route::Session).await?;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = subject::rss_kib(pid)?;
    let per = (after as f64 - before as f64) / config.idle_sessions as f64;
    Ok(Outcome {
        sample: None,
        figures: vec![
            ("kib_per_session", per),
            ("rss_before_kib", before as f64),
            ("rss_after_kib", after as f64),
        ],
    })
}

/// The median of several cold starts.
async fn cold_starts(subject: &Subject, config: &Config) -> anyhow::Result<Outcome> {
    let launch = subject.stdio().context("no stdio server")?;
    let mut times = Vec::new();
    for _ in 0..config.cold_starts {
        times.push(stdio::cold_start(&launch, Family::Handshake).await?);
    }
    let median = crate::stats::median(&mut times).context("no cold start")?;
    Ok(Outcome {
        sample: None,
        figures: vec![("cold_start_ms", median)],
    })
}
