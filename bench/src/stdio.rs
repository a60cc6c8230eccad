//! The stdio load: spawn a server, shake hands (or not, for 2026-07-28), keep C calls in
//! flight over its pipes, and read its RSS from /proc.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::subject::Launch;
use crate::wire::{self, Family, Verdict};
use crate::Budget;

/// How long a server may take to answer any one message before the run fails.
const STALL: Duration = Duration::from_secs(30);
/// Send times are kept in a ring indexed by id; in-flight calls never exceed it.
const RING: usize = 4096;

/// A server running on the other end of a pair of pipes.
pub struct StdioServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl StdioServer {
    /// Starts `launch` with piped stdin and stdout.
    pub fn spawn(launch: &Launch) -> anyhow::Result<StdioServer> {
        let mut child = launch
            .command()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("spawning {}", launch.program.display()))?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::with_capacity(64 * 1024, child.stdout.take().context("no stdout")?);
        Ok(StdioServer {
            child,
            stdin,
            stdout,
            line: Vec::new(),
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    async fn send(&mut self, frame: &[u8]) -> anyhow::Result<()> {
        self.stdin.write_all(frame).await?;
        self.stdin.write_all(b"\n").await?;
        self.stdin.flush().await?;
        Ok(())
    }

    /// Reads the next line into `self.line`.
    async fn read_line(&mut self) -> anyhow::Result<()> {
        self.line.clear();
        let read = tokio::time::timeout(STALL, self.stdout.read_until(b'\n', &mut self.line))
            .await
            .context("the server stopped answering")??;
        if read == 0 {
            bail!("the server closed its stdout");
        }
        Ok(())
    }

    /// `initialize`, its answer, then `notifications/initialized`.
    pub async fn handshake(&mut self) -> anyhow::Result<()> {
        self.send(wire::initialize().as_bytes()).await?;
        loop {
            self.read_line().await?;
            let value: serde_json::Value = serde_json::from_slice(&self.line)
                .with_context(|| format!("not JSON: {}", wire::lossy(&self.line)))?;
            if value.get("id") == Some(&serde_json::json!(0)) {
                if value.get("result").is_none() {
                    bail!("initialize failed: {value}");
                }
                break;
            }
        }
        self.send(wire::initialized().as_bytes()).await
    }

    /// Sends calls, `inflight` at a time, until the budget is spent, and reads every answer.
    pub async fn load(
        &mut self,
        budget: Budget,
        inflight: usize,
        family: Family,
        first_id: u64,
    ) -> anyhow::Result<crate::stats::Sample> {
        let mut sample = crate::stats::Sample::default();
        let mut sent_at = vec![Instant::now(); RING];
        let mut out = Vec::with_capacity(inflight * 300);
        let mut next = first_id;
        let mut outstanding = 0usize;
        let mut sent = 0u64;
        let start = Instant::now();
        let deadline = start + budget.time;
        loop {
            let now = Instant::now();
            while outstanding < inflight && sent < budget.calls && now < deadline {
                wire::call(&mut out, next, family);
                out.push(b'\n');
                sent_at[next as usize % RING] = now;
                next += 1;
                sent += 1;
                outstanding += 1;
            }
            if !out.is_empty() {
                self.stdin.write_all(&out).await?;
                self.stdin.flush().await?;
                out.clear();
            }
            if outstanding == 0 {
                break;
            }
            // One read, then every line already buffered without another syscall.
            loop {
                self.read_line().await?;
                match wire::judge(&self.line) {
                    Verdict::Answer { id, matched } => {
                        outstanding -= 1;
                        let latency = sent_at[id as usize % RING].elapsed();
                        let line = &self.line;
                        sample.answer(latency, matched, || wire::lossy(line));
                    }
                    Verdict::Error(e) => {
                        outstanding -= 1;
                        sample.answer(Duration::ZERO, false, || e);
                    }
                    Verdict::Other => {}
                }
                if !self.stdout.buffer().contains(&b'\n') {
                    break;
                }
            }
        }
        sample.elapsed = start.elapsed();
        Ok(sample)
    }

    /// Closes stdin and waits for the server to exit (killing it after a grace period).
    pub async fn close(mut self) {
        let _ = self.stdin.shutdown().await;
        drop(self.stdin);
        if tokio::time::timeout(Duration::from_secs(3), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// Spawn to the first echo answer (handshake included), in milliseconds.
pub async fn cold_start(launch: &Launch, family: Family) -> anyhow::Result<f64> {
    let start = Instant::now();
    let mut server = StdioServer::spawn(launch)?;
    if family == Family::Handshake {
        server.handshake().await?;
    }
    let budget = Budget {
        calls: 1,
        time: Duration::from_secs(60),
    };
    let sample = server.load(budget, 1, family, 1).await?;
    let elapsed = start.elapsed();
    server.close().await;
    if sample.matched != 1 {
        bail!("the first call did not match: {:?}", sample.first_error);
    }
    Ok(elapsed.as_secs_f64() * 1000.0)
}
