//! A server run as a child process, spoken to over its stdin and stdout.
//!
//! The child's stderr is read line by line into the log (`tracing`, target
//! `junction::child`) and the last lines are kept, so a host can show why a server failed
//! to start. It is read as bytes, whatever they are (invalid UTF-8 is shown replaced, and
//! never stops the reading: a pipe nobody reads would block the child, or kill it with
//! SIGPIPE once closed); a line is cut at [`StderrLimits::line_bytes`] bytes, the rest of it
//! skipped, and [`StderrLimits::kept_lines`] lines are kept ([`CommandSpec::stderr`]).
//! [`ChildProcess::shutdown`] follows the specification: close stdin, wait, send SIGTERM,
//! wait, then SIGKILL.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use super::stdio::{read_frames, write_frames, Stray, WriteEnd};
use super::{outbound_queue, Connection, Limits, INBOUND_QUEUE};

/// How many stderr lines are kept for [`ChildProcess::stderr_tail`] by default.
pub const STDERR_TAIL: usize = 40;

/// The longest stderr line kept or logged by default, in bytes; longer ones are cut.
pub const STDERR_LINE: usize = 4 * 1024;

/// How much of a child's stderr is held: the length of a line and how many lines are kept
/// for [`ChildProcess::stderr_tail`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StderrLimits {
    /// The longest line logged or kept, in bytes ([`STDERR_LINE`] by default); the rest of
    /// a longer line is skipped and the line ends with `…`.
    pub line_bytes: usize,
    /// How many of the last lines are kept ([`STDERR_TAIL`] by default).
    pub kept_lines: usize,
}

impl Default for StderrLimits {
    fn default() -> Self {
        StderrLimits {
            line_bytes: STDERR_LINE,
            kept_lines: STDERR_TAIL,
        }
    }
}

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct CommandSpec {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables added to (or overriding) the inherited environment.
    pub env: BTreeMap<String, String>,
    /// Start from an empty environment instead of the parent's: the child gets `env` only.
    pub clear_env: bool,
    /// The working directory; the parent's when `None`.
    pub cwd: Option<PathBuf>,
    /// How much of its stderr is held.
    pub stderr: StderrLimits,
}

impl CommandSpec {
    /// A program with no arguments.
    pub fn new(program: impl Into<String>) -> Self {
        CommandSpec {
            program: program.into(),
            ..Default::default()
        }
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Sets the working directory.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets how long a stderr line may be and how many are kept.
    pub fn stderr(mut self, limits: StderrLimits) -> Self {
        self.stderr = limits;
        self
    }
}

/// A failure to start the child.
#[derive(Debug, thiserror::Error)]
#[error("could not start `{program}`: {source}")]
pub struct SpawnError {
    /// The program that failed to start.
    pub program: String,
    /// The operating system's reason.
    #[source]
    pub source: std::io::Error,
}

/// How long [`ChildProcess::shutdown`] waits at each step.
#[derive(Debug, Clone, Copy)]
pub struct ShutdownTimeouts {
    /// After closing stdin, before SIGTERM.
    pub after_close: Duration,
    /// After SIGTERM, before SIGKILL.
    pub after_term: Duration,
}

impl Default for ShutdownTimeouts {
    fn default() -> Self {
        ShutdownTimeouts {
            after_close: Duration::from_secs(2),
            after_term: Duration::from_secs(2),
        }
    }
}

/// A running child process with its connection.
#[derive(Debug)]
pub struct ChildProcess {
    child: Child,
    stdin_closer: Option<tokio::sync::oneshot::Sender<()>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    program: String,
}

/// Starts `spec` and returns the connection to it and the process handle.
pub fn spawn(spec: &CommandSpec, limits: Limits) -> Result<(Connection, ChildProcess), SpawnError> {
    let mut command = Command::new(&spec.program);
    if spec.clear_env {
        command.env_clear();
    }
    command
        .args(&spec.args)
        .envs(&spec.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own process group: Ctrl-C at the host's terminal is for the host (which ends the
    // server the specification's way), not a signal for every server to die of.
    #[cfg(unix)]
    command.process_group(0);
    if let Some(dir) = &spec.cwd {
        command.current_dir(dir);
    }
    let spawn_error = |source| SpawnError {
        program: spec.program.clone(),
        source,
    };
    let mut child = command.spawn().map_err(spawn_error)?;
    let missing = || spawn_error(std::io::Error::other("child pipes were not created"));
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let stdout = child.stdout.take().ok_or_else(missing)?;
    let stderr = child.stderr.take().ok_or_else(missing)?;

    let (out_tx, out_rx) = outbound_queue(limits.max_queued);
    let (in_tx, in_rx) = mpsc::channel(INBOUND_QUEUE);
    let (close_tx, close_rx) = tokio::sync::oneshot::channel::<()>();
    let reading = tokio::spawn(read_frames(
        BufReader::new(stdout),
        in_tx,
        limits.max_frame,
        Stray::Break,
    ));
    tokio::spawn(async move {
        // The writer owns stdin; closing it is how a client says goodbye on stdio. A dropped
        // closer (the process handle went without a shutdown) closes it too.
        let close = async {
            let _ = close_rx.await;
        };
        if write_frames(stdin, out_rx, close).await == WriteEnd::Overflowed {
            // A server that does not read is disconnected both ways.
            reading.abort();
        }
    });
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    tokio::spawn(read_stderr(
        stderr,
        tail.clone(),
        spec.program.clone(),
        spec.stderr,
    ));
    let process = ChildProcess {
        child,
        stdin_closer: Some(close_tx),
        stderr: tail,
        program: spec.program.clone(),
    };
    Ok((Connection::new(out_tx, in_rx), process))
}

async fn read_stderr(
    stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
    program: String,
    limits: StderrLimits,
) {
    let mut reader = BufReader::new(stderr);
    while let Some(line) = next_line(&mut reader, limits.line_bytes).await {
        tracing::info!(target: "junction::child", program = %program, "{line}");
        if let Ok(mut tail) = tail.lock() {
            tail.push_back(line);
            while tail.len() > limits.kept_lines {
                tail.pop_front();
            }
        }
    }
}

/// The next line of `reader`, at most `max` bytes of it (a cut line ends with `…`), decoded
/// lossily; `None` at the end.
async fn next_line<R: AsyncBufRead + Unpin>(reader: &mut R, max: usize) -> Option<String> {
    let mut line = Vec::new();
    let mut cut = false;
    loop {
        let buf = match reader.fill_buf().await {
            Ok(buf) if !buf.is_empty() => buf,
            _ if line.is_empty() && !cut => return None,
            _ => break,
        };
        let newline = memchr::memchr(b'\n', buf);
        let chunk = &buf[..newline.unwrap_or(buf.len())];
        let room = max.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        cut |= chunk.len() > room;
        let used = newline.map_or(buf.len(), |i| i + 1);
        reader.consume(used);
        if newline.is_some() {
            break;
        }
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    let mut text = String::from_utf8_lossy(&line).into_owned();
    if cut {
        text.push('…');
    }
    Some(text)
}

impl ChildProcess {
    /// The process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// The last lines the child wrote to stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The exit status if the child has already exited.
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits for the child to exit by itself.
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// Ends the child: close stdin, wait, SIGTERM, wait, SIGKILL. Where there are no signals
    /// (not Unix), the kill follows the first wait.
    pub async fn shutdown(&mut self, timeouts: ShutdownTimeouts) -> std::io::Result<ExitStatus> {
        if let Some(closer) = self.stdin_closer.take() {
            let _ = closer.send(());
        }
        if let Ok(status) = tokio::time::timeout(timeouts.after_close, self.child.wait()).await {
            return status;
        }
        #[cfg(unix)]
        {
            if let Some(pid) = self
                .child
                .id()
                .and_then(|id| rustix::process::Pid::from_raw(id as i32))
            {
                tracing::debug!(program = %self.program, "child still running after stdin closed; sending SIGTERM");
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            }
            if let Ok(status) = tokio::time::timeout(timeouts.after_term, self.child.wait()).await {
                return status;
            }
        }
        tracing::warn!(program = %self.program, "child still running; killing it");
        self.child.kill().await?;
        self.child.wait().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &'static [u8], max: usize) -> Vec<String> {
        let mut reader = BufReader::with_capacity(4, input);
        let mut out = Vec::new();
        while let Some(line) = next_line(&mut reader, max).await {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn stderr_lines_are_bytes_cut_at_the_limit() {
        let got = lines(b"ok\r\nbad \xff byte\n0123456789abcdef\nlast", 10).await;
        assert_eq!(got, vec!["ok", "bad \u{fffd} byte", "0123456789…", "last"]);
    }
}
