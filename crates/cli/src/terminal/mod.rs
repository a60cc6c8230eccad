//! The person at the terminal: what the host reports is rendered here, and what the host
//! asks (tool-call consent, sampling approval, elicitation) is put to them here.
//!
//! - [`style`]: colour, only on a terminal and only without `NO_COLOR`.
//! - [`events`]: each host [`junction_host::events::Event`] as readable lines.
//! - [`consent`] and [`interaction`]: the host's `Consent` and `Interaction` answered from an
//!   input stream, or without asking in a non-interactive run.
//! - [`markdown`]: the model's Markdown, rendered line by line as it streams.
//! - [`listing`]: the tools, slash commands, resources and servers a host offers.
//! - [`editor`]: the chat's line editor, with completion.
//! - [`spinner`]: the spinner shown while the model thinks.
//! - [`escape`]: Esc pressed while a turn runs, which interrupts it.
//!
//! Questions and answers go through one [`Terminal`]: any `BufRead` and `Write`, so tests
//! drive the prompts with scripted input and read what was shown.
//!
//! A question is read on a blocking thread. When the turn that asked it is interrupted
//! ([`Terminal::abandon_questions`]), a read from stdin gives up (it waits with `poll` and
//! looks between waits), so that the line typed next goes to the chat's prompt rather than
//! to a question nobody waits for any more.

pub mod consent;
pub mod editor;
pub mod escape;
pub mod events;
pub mod formats;
pub mod interaction;
pub mod left_tasks;
pub mod listing;
pub mod markdown;
pub mod spinner;
pub mod style;

use std::io::{BufRead, Read, Write};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

pub use style::Style;

/// How questions are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answers {
    /// Ask the person on the input stream.
    Ask,
    /// Nobody to ask: allow tool calls once and let sampling through (`--yes`).
    Yes,
    /// Nobody to ask: refuse (`--no`, and the default when stdin is not a terminal).
    No,
}

/// One input stream and one output stream, shared by everything that asks questions.
/// Cheap to clone; one question (or one whole form) holds it at a time.
#[derive(Clone)]
pub struct Terminal {
    io: Arc<Mutex<Io>>,
    style: Style,
    /// Counts [`Terminal::abandon_questions`]; a read begun before a change gives up.
    abandoned: Arc<AtomicU64>,
    /// How many exchanges hold the streams or wait for them; the [`escape`] watch makes way
    /// for them.
    exchanges: Arc<AtomicUsize>,
}

impl std::fmt::Debug for Terminal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminal")
            .field("style", &self.style)
            .finish_non_exhaustive()
    }
}

/// The streams behind a [`Terminal`], held for the length of one exchange.
pub struct Io {
    input: Box<dyn BufRead + Send>,
    output: Box<dyn Write + Send>,
    /// How to colour what is shown.
    pub style: Style,
    /// The [`Terminal::abandoned`] count the exchange under way began at.
    began: Arc<AtomicU64>,
}

/// How often a waiting read of stdin looks whether its question was abandoned.
const ABANDON_CHECK: Duration = Duration::from_millis(100);

/// Stdin that waits for input with `poll`, giving up with an error once the exchange's
/// question is abandoned.
struct AbandonableStdin {
    buffered: std::io::BufReader<std::io::Stdin>,
    abandoned: Arc<AtomicU64>,
    began: Arc<AtomicU64>,
}

impl AbandonableStdin {
    fn wait_readable(&self) -> std::io::Result<()> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        use std::os::fd::AsFd;
        let stdin = std::io::stdin();
        let timeout = PollTimeout::try_from(ABANDON_CHECK).unwrap_or(PollTimeout::MAX);
        loop {
            if self.abandoned.load(Ordering::SeqCst) != self.began.load(Ordering::SeqCst) {
                // Not `Interrupted`: `read_line` retries those.
                return Err(std::io::Error::other("the question was abandoned"));
            }
            let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, timeout) {
                Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
                // Readable, closed or failed: the read says which.
                Ok(_) | Err(_) => return Ok(()),
            }
        }
    }
}

impl Read for AbandonableStdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.buffered.buffer().is_empty() {
            self.wait_readable()?;
        }
        self.buffered.read(buf)
    }
}

impl BufRead for AbandonableStdin {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.buffered.buffer().is_empty() {
            self.wait_readable()?;
        }
        self.buffered.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.buffered.consume(amount);
    }
}

impl Io {
    /// Shows one line. A closed output is not worth failing a question for.
    pub fn say(&mut self, line: &str) {
        let _ = writeln!(self.output, "{line}");
        let _ = self.output.flush();
    }

    /// [`Io::ask`] for a secret: when stdin is a terminal, what is typed is not echoed.
    pub fn ask_secret(&mut self, prompt: &str) -> Option<String> {
        use nix::sys::termios::{tcgetattr, tcsetattr, LocalFlags, SetArg};
        use std::os::fd::AsFd;
        let stdin = std::io::stdin();
        let Ok(saved) = tcgetattr(stdin.as_fd()) else {
            return self.ask(prompt);
        };
        let mut quiet = saved.clone();
        quiet.local_flags.remove(LocalFlags::ECHO);
        let _ = tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &quiet);
        let answer = self.ask(prompt);
        let _ = tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &saved);
        // The Enter that ended the line was not echoed either.
        self.say("");
        answer
    }

    /// Shows `prompt` and reads one line without its line ending; `None` at the end of the
    /// input (or when it cannot be read).
    pub fn ask(&mut self, prompt: &str) -> Option<String> {
        let _ = write!(self.output, "{prompt}");
        let _ = self.output.flush();
        let mut line = String::new();
        match self.input.read_line(&mut line) {
            Ok(0) | Err(_) => {
                // End the prompt's line so later output does not run on after it.
                self.say("");
                None
            }
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
        }
    }
}

impl Terminal {
    /// A terminal over `input` and `output`.
    #[cfg(test)]
    pub fn new(
        input: impl BufRead + Send + 'static,
        output: impl Write + Send + 'static,
        style: Style,
    ) -> Self {
        Terminal::over(Box::new(input), Box::new(output), style, Default::default())
    }

    fn over(
        input: Box<dyn BufRead + Send>,
        output: Box<dyn Write + Send>,
        style: Style,
        abandoned: Arc<AtomicU64>,
    ) -> Self {
        Terminal {
            io: Arc::new(Mutex::new(Io {
                input,
                output,
                style,
                began: Default::default(),
            })),
            style,
            abandoned,
            exchanges: Default::default(),
        }
    }

    /// This process's stdin (its reads can be abandoned) with `output`.
    fn on_stdin(output: Box<dyn Write + Send>, style: Style) -> Self {
        let abandoned = Arc::new(AtomicU64::new(0));
        let began = Arc::new(AtomicU64::new(0));
        let input = AbandonableStdin {
            buffered: std::io::BufReader::new(std::io::stdin()),
            abandoned: abandoned.clone(),
            began: began.clone(),
        };
        let terminal = Terminal::over(Box::new(input), output, style, abandoned);
        terminal.with(|io| io.began = began);
        terminal
    }

    /// This process's stdin and stdout.
    pub fn stdio(style: Style) -> Self {
        Terminal::on_stdin(Box::new(std::io::stdout()), style)
    }

    /// This process's stdin, with what is shown going to stderr (so that stdout carries
    /// only a command's result).
    pub fn stdin_stderr(style: Style) -> Self {
        Terminal::on_stdin(Box::new(std::io::stderr()), style)
    }

    /// Gives up every question being read now or about to be (their exchanges answer with
    /// their fallback): the turn that asked them was interrupted.
    pub fn abandon_questions(&self) {
        self.abandoned.fetch_add(1, Ordering::SeqCst);
    }

    /// How output is coloured.
    pub fn style(&self) -> Style {
        self.style
    }

    /// Runs one exchange with the streams held.
    pub fn with<T>(&self, f: impl FnOnce(&mut Io) -> T) -> T {
        self.since(self.abandoned.load(Ordering::SeqCst), f)
    }

    /// Runs one exchange that began at abandon count `began`.
    fn since<T>(&self, began: u64, f: impl FnOnce(&mut Io) -> T) -> T {
        let _counted = Exchange::begin(&self.exchanges);
        let mut io = self.io.lock().unwrap_or_else(PoisonError::into_inner);
        io.began.store(began, Ordering::SeqCst);
        f(&mut io)
    }

    /// Whether an exchange holds the streams or waits for them.
    fn exchanging(&self) -> bool {
        self.exchanges.load(Ordering::SeqCst) > 0
    }

    /// The streams, when no exchange holds them or waits for them.
    fn hold_idle(&self) -> Option<MutexGuard<'_, Io>> {
        if self.exchanging() {
            return None;
        }
        match self.io.try_lock() {
            Ok(io) => Some(io),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Shows lines.
    pub fn say_all(&self, lines: &[String]) {
        self.with(|io| lines.iter().for_each(|l| io.say(l)));
    }

    /// Runs `f` with the streams held on a blocking thread (reading waits on the person),
    /// so the host's other work goes on meanwhile.
    pub async fn exchange<T: Send + 'static>(
        &self,
        fallback: T,
        f: impl FnOnce(&mut Io) -> T + Send + 'static,
    ) -> T {
        let terminal = self.clone();
        // Counted now: an interruption before the thread starts abandons it too.
        let began = self.abandoned.load(Ordering::SeqCst);
        tokio::task::spawn_blocking(move || terminal.since(began, f))
            .await
            .unwrap_or(fallback)
    }
}

/// One exchange counted in [`Terminal::exchanges`] while it lives.
struct Exchange<'a>(&'a AtomicUsize);

impl<'a> Exchange<'a> {
    fn begin(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Exchange(count)
    }
}

impl Drop for Exchange<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// At most `limit` characters of `text`, with `…` when cut.
pub fn shorten(text: &str, limit: usize) -> String {
    if text.chars().count() <= limit {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(limit.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// A test writer whose bytes can be read back.
#[cfg(test)]
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

#[cfg(test)]
impl Captured {
    /// What was written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[cfg(test)]
impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A terminal that reads `input` and captures its output, without colour.
#[cfg(test)]
pub fn scripted(input: &str) -> (Terminal, Captured) {
    let out = Captured::default();
    let terminal = Terminal::new(
        std::io::Cursor::new(input.as_bytes().to_vec()),
        out.clone(),
        Style::plain(),
    );
    (terminal, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ask_reads_one_line_at_a_time_and_none_at_the_end() {
        let (terminal, out) = scripted("first\r\nsecond\n");
        terminal.with(|io| {
            assert_eq!(io.ask("1? ").as_deref(), Some("first"));
            assert_eq!(io.ask("2? ").as_deref(), Some("second"));
            assert_eq!(io.ask("3? "), None);
        });
        assert_eq!(out.text(), "1? 2? 3? \n");
    }

    #[test]
    fn shorten_cuts_long_text_with_an_ellipsis() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcdef", 4), "abc…");
    }
}
