//! The servers under test, and how each is started over stdio and over HTTP.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};

/// A command line that starts a server.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
}

impl Launch {
    fn new(program: impl Into<PathBuf>, args: &[&str]) -> Launch {
        Launch {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
        }
    }

    fn arg(mut self, arg: impl Into<String>) -> Launch {
        self.args.push(arg.into());
        self
    }

    /// The command, its stderr discarded (servers log there; the bench reads stdout).
    pub fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command.args(&self.args).stderr(Stdio::null());
        command
    }
}

/// How an HTTP server is asked to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpMode {
    /// Sessions, answering JSON where the server can (`sse`: always an event stream).
    Sessions { sse: bool },
    /// No sessions: every POST stands alone (the mode 2026-07-28 requests are sent to).
    Sessionless,
}

/// What kind of server a subject is.
#[derive(Clone, Debug)]
enum Kind {
    /// `bench-junction-echo` (this crate's binary, or one built from another branch).
    Junction(PathBuf),
    /// `bench-rmcp-echo`; `pipes` serves stdio through `rmcp::transport::stdio_pipes`.
    Rmcp { program: PathBuf, pipes: bool },
    /// `peers/ts-echo.mjs` under Node, loading the SDK from `modules`.
    Ts {
        node: PathBuf,
        script: PathBuf,
        modules: PathBuf,
    },
    /// `peers/py-echo.py` with the `mcpserver` (FastMCP) or `lowlevel` server.
    Py {
        python: PathBuf,
        script: PathBuf,
        flavor: &'static str,
    },
    /// `bench-raw-echo`.
    Raw(PathBuf),
}

/// One server under test.
#[derive(Clone, Debug)]
pub struct Subject {
    /// Its name in tables and in `--only`.
    pub name: String,
    kind: Kind,
}

impl Subject {
    /// Junction's echo server at `program`.
    pub fn junction(name: &str, program: PathBuf) -> Subject {
        Subject {
            name: name.to_owned(),
            kind: Kind::Junction(program),
        }
    }

    /// rmcp's echo server; with `pipes`, its non-blocking stdio (stdio only).
    pub fn rmcp(name: &str, program: PathBuf, pipes: bool) -> Subject {
        Subject {
            name: name.to_owned(),
            kind: Kind::Rmcp { program, pipes },
        }
    }

    /// The TypeScript SDK's echo server.
    pub fn ts(node: PathBuf, script: PathBuf, modules: PathBuf) -> Subject {
        Subject {
            name: "ts-sdk".to_owned(),
            kind: Kind::Ts {
                node,
                script,
                modules,
            },
        }
    }

    /// The Python SDK's echo server, `flavor` `mcpserver` or `lowlevel`.
    pub fn py(name: &str, python: PathBuf, script: PathBuf, flavor: &'static str) -> Subject {
        Subject {
            name: name.to_owned(),
            kind: Kind::Py {
                python,
                script,
                flavor,
            },
        }
    }

    /// The raw limit.
    pub fn raw(program: PathBuf) -> Subject {
        Subject {
            name: "raw".to_owned(),
            kind: Kind::Raw(program),
        }
    }

    /// Whether this is the raw limit (ratios are taken against it).
    pub fn is_raw(&self) -> bool {
        matches!(self.kind, Kind::Raw(_))
    }

    /// The command that serves over stdio.
    pub fn stdio(&self) -> Option<Launch> {
        Some(match &self.kind {
            Kind::Junction(p) | Kind::Raw(p) => Launch::new(p, &["stdio"]),
            Kind::Rmcp { program, pipes } => {
                let launch = Launch::new(program, &["stdio"]);
                if *pipes {
                    launch.arg("--pipes")
                } else {
                    launch
                }
            }
            Kind::Ts {
                node,
                script,
                modules,
            } => Launch::new(node, &[])
                .arg(script.display().to_string())
                .arg(modules.display().to_string())
                .arg("stdio"),
            Kind::Py {
                python,
                script,
                flavor,
            } => Launch::new(python, &[])
                .arg(script.display().to_string())
                .arg(*flavor)
                .arg("stdio"),
        })
    }

    /// Whether the subject answers 2026-07-28 requests (the TypeScript SDK 1.x does not).
    pub fn speaks_2026(&self) -> bool {
        !matches!(self.kind, Kind::Ts { .. })
    }

    /// The command that serves HTTP on 127.0.0.1:`port` in `mode`.
    pub fn http(&self, port: u16, mode: HttpMode) -> Option<Launch> {
        let addr = format!("127.0.0.1:{port}");
        let launch = match &self.kind {
            Kind::Junction(p)
            | Kind::Rmcp {
                program: p,
                pipes: false,
            } => Launch::new(p, &["http"]).arg(addr),
            Kind::Rmcp { pipes: true, .. } => return None,
            Kind::Raw(p) => Launch::new(p, &["http"]).arg(addr),
            Kind::Ts {
                node,
                script,
                modules,
            } => Launch::new(node, &[])
                .arg(script.display().to_string())
                .arg(modules.display().to_string())
                .arg("http")
                .arg(port.to_string()),
            Kind::Py {
                python,
                script,
                flavor,
            } => Launch::new(python, &[])
                .arg(script.display().to_string())
                .arg(*flavor)
                .arg("http")
                .arg(port.to_string()),
        };
        Some(match mode {
            HttpMode::Sessions { sse: false } => launch,
            HttpMode::Sessions { sse: true } => launch.arg("--sse"),
            // The raw server has no sessions to turn off.
            HttpMode::Sessionless if self.is_raw() => launch,
            HttpMode::Sessionless => launch.arg("--sessionless"),
        })
    }
}

/// An HTTP server process, killed when dropped.
pub struct HttpServer {
    child: tokio::process::Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl HttpServer {
    /// Starts `subject` in `mode` on a free port and waits until it accepts connections.
    pub async fn start(subject: &Subject, mode: HttpMode) -> anyhow::Result<Option<HttpServer>> {
        let port = free_port()?;
        let Some(launch) = subject.http(port, mode) else {
            return Ok(None);
        };
        let mut child = launch
            .command()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("spawning {}", launch.program.display()))?;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let start = Instant::now();
        while tokio::net::TcpStream::connect(addr).await.is_err() {
            if let Some(status) = child.try_wait()? {
                bail!("{} exited with {status} before listening", subject.name);
            }
            if start.elapsed() > Duration::from_secs(60) {
                bail!("{} did not listen within 60 s", subject.name);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(Some(HttpServer { child, addr }))
    }

    /// The server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

/// A port nobody listens on right now.
fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Resident set size of process `pid` in KiB, from `/proc/PID/status`.
pub fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmRSS line")
}
