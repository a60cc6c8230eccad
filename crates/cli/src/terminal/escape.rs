//! Esc while a turn runs interrupts it, as Ctrl-C does.
//!
//! Between turns the line editor reads keys one by one; during a turn the terminal is back
//! in line mode, where Esc would wait in the line until Enter. So while a turn runs, an
//! [`EscapeWatch`] thread takes the terminal out of line mode (no echo, but Ctrl-C still
//! sends SIGINT) and reads the keys itself. It makes way for the host's questions: while a
//! consent question or a form holds the [`Terminal`] (or waits for it), the terminal is in
//! line mode and the watch reads nothing.
//!
//! An Esc on its own is the key; an Esc followed at once by more bytes is a key such as an
//! arrow, and is dropped. What else is typed during the turn is kept, as the terminal's
//! line mode would have kept it, and given back by [`EscapeWatch::finish`]: the lines ended
//! with Enter are sent after the turn, and the rest waits at the next prompt.

use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use nix::sys::termios::{tcgetattr, tcsetattr, LocalFlags, SetArg, SpecialCharacterIndices};
use tokio_util::sync::CancellationToken;

use super::Terminal;

/// How long the watch waits for a key before it looks whether it must stop or make way.
const LOOK: Duration = Duration::from_millis(50);

/// The Esc key.
const ESC: u8 = 0x1b;

/// Watches for Esc until finished (or dropped).
#[derive(Debug)]
pub struct EscapeWatch {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<u8>>>,
}

impl EscapeWatch {
    /// Starts watching stdin: Esc cancels `interrupt` and gives up the questions being read.
    pub fn start(terminal: &Terminal, interrupt: CancellationToken) -> EscapeWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let watching = stop.clone();
        let terminal = terminal.clone();
        let thread = std::thread::spawn(move || {
            watch(&terminal, &watching, || {
                interrupt.cancel();
                terminal.abandon_questions();
            })
        });
        EscapeWatch {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops watching, with the terminal as it was; returns the text typed meanwhile, each
    /// line ended by Enter ending in `\n`.
    pub fn finish(mut self) -> String {
        typed_text(&self.stop_thread())
    }

    fn stop_thread(&mut self) -> Vec<u8> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread
            .take()
            .and_then(|thread| thread.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for EscapeWatch {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// The watch's thread: reads keys while nobody asks a question, until `stop`. Returns
/// the bytes typed that were not Esc.
fn watch(terminal: &Terminal, stop: &AtomicBool, on_escape: impl Fn()) -> Vec<u8> {
    let stdin = std::io::stdin();
    let mut typed = Vec::new();
    let Ok(line_mode) = tcgetattr(stdin.as_fd()) else {
        return typed;
    };
    let mut keys = line_mode.clone();
    keys.local_flags
        .remove(LocalFlags::ICANON | LocalFlags::ECHO);
    keys.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
    keys.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
    while !stop.load(Ordering::SeqCst) {
        // Held while reading keys, so that no question reads at the same time.
        let Some(_held) = terminal.hold_idle() else {
            std::thread::sleep(LOOK);
            continue;
        };
        if tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &keys).is_err() {
            return typed;
        }
        let open = read_keys(terminal, stop, &mut typed, &on_escape);
        let _ = tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &line_mode);
        if !open {
            break;
        }
    }
    typed
}

/// Reads keys until `stop` or until a question wants the terminal; `false` once stdin is
/// closed or fails.
fn read_keys(
    terminal: &Terminal,
    stop: &AtomicBool,
    typed: &mut Vec<u8>,
    on_escape: &impl Fn(),
) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let stdin = std::io::stdin();
    let timeout = PollTimeout::try_from(LOOK).unwrap_or(PollTimeout::MAX);
    let mut buffer = [0u8; 256];
    while !stop.load(Ordering::SeqCst) && !terminal.exchanging() {
        let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(_) => return false,
        }
        let read = match nix::unistd::read(stdin.as_fd(), &mut buffer) {
            Ok(0) | Err(_) => return false,
            Ok(read) => read,
        };
        let (escape, text) = keys_in(&buffer[..read]);
        typed.extend_from_slice(text);
        if escape {
            on_escape();
        }
    }
    true
}

/// Whether `chunk` (the bytes one read gave) holds an Esc pressed on its own, and the bytes
/// typed before any escape sequence.
fn keys_in(chunk: &[u8]) -> (bool, &[u8]) {
    let Some(at) = chunk.iter().position(|&b| b == ESC) else {
        return (false, chunk);
    };
    // A key like an arrow sends Esc and its sequence at once; Esc alone is the last byte,
    // or is followed by another Esc when pressed twice quickly.
    let alone = matches!(chunk.get(at + 1), None | Some(&ESC));
    (alone, &chunk[..at])
}

/// The text of `typed` as the terminal's line mode would have made it: Backspace erases
/// (within the line), each line ends in `\n`, other control characters are dropped.
fn typed_text(typed: &[u8]) -> String {
    let mut text = String::new();
    for c in String::from_utf8_lossy(typed).chars() {
        match c {
            '\r' | '\n' => text.push('\n'),
            '\u{7f}' | '\u{8}' => {
                if !text.ends_with('\n') {
                    text.pop();
                }
            }
            c if c.is_control() => {}
            c => text.push(c),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_esc_alone_is_the_key() {
        assert_eq!(keys_in(b"\x1b"), (true, &b""[..]));
        assert_eq!(keys_in(b"ab\x1b"), (true, &b"ab"[..]));
        assert_eq!(keys_in(b"\x1b\x1b"), (true, &b""[..]));
    }

    #[test]
    fn an_escape_sequence_is_not_the_key_and_is_dropped() {
        assert_eq!(keys_in(b"\x1b[A"), (false, &b""[..]));
        assert_eq!(keys_in(b"hi\x1b[Dx"), (false, &b"hi"[..]));
        assert_eq!(keys_in(b"plain"), (false, &b"plain"[..]));
    }

    #[test]
    fn typed_text_is_edited_as_in_line_mode() {
        assert_eq!(typed_text("héllo\r\tyou".as_bytes()), "héllo\nyou");
        assert_eq!(typed_text(b"ab\x7fc\n\x7f\x7fd"), "ac\nd");
    }
}
