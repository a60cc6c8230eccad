//! The person at the terminal: what the host reports is rendered here, and what the host
//! asks (tool-call consent, sampling approval, elicitation) is put to them here.
//!
//! - [`style`]: colour, only on a terminal and only without `NO_COLOR`.
//! - [`events`]: each host [`junction_host::events::Event`] as readable lines.
//! - [`consent`] and [`interaction`]: the host's `Consent` and `Interaction` answered from an
//!   input stream, or without asking in a non-interactive run.
//! - [`listing`]: the tools, slash commands, resources and servers a host offers.
//! - [`editor`]: the chat's line editor, with completion.
//! - [`spinner`]: the spinner shown while the model thinks.
//!
//! Questions and answers go through one [`Terminal`]: any `BufRead` and `Write`, so tests
//! drive the prompts with scripted input and read what was shown.

pub mod consent;
pub mod editor;
pub mod events;
pub mod interaction;
pub mod listing;
pub mod spinner;
pub mod style;

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex, PoisonError};

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
}

impl Io {
    /// Shows one line. A closed output is not worth failing a question for.
    pub fn say(&mut self, line: &str) {
        let _ = writeln!(self.output, "{line}");
        let _ = self.output.flush();
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
    pub fn new(
        input: impl BufRead + Send + 'static,
        output: impl Write + Send + 'static,
        style: Style,
    ) -> Self {
        Terminal {
            io: Arc::new(Mutex::new(Io {
                input: Box::new(input),
                output: Box::new(output),
                style,
            })),
            style,
        }
    }

    /// This process's stdin and stdout.
    pub fn stdio(style: Style) -> Self {
        Terminal::new(
            std::io::BufReader::new(std::io::stdin()),
            std::io::stdout(),
            style,
        )
    }

    /// This process's stdin, with what is shown going to stderr (so that stdout carries
    /// only a command's result).
    pub fn stdin_stderr(style: Style) -> Self {
        Terminal::new(
            std::io::BufReader::new(std::io::stdin()),
            std::io::stderr(),
            style,
        )
    }

    /// How output is coloured.
    pub fn style(&self) -> Style {
        self.style
    }

    /// Runs one exchange with the streams held.
    pub fn with<T>(&self, f: impl FnOnce(&mut Io) -> T) -> T {
        f(&mut self.io.lock().unwrap_or_else(PoisonError::into_inner))
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
        tokio::task::spawn_blocking(move || terminal.with(f))
            .await
            .unwrap_or(fallback)
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
