//! The signals that stop the host: SIGINT (Ctrl-C), SIGTERM and SIGHUP.
//!
//! Once [`Signals::install`] has run, none of them kills the process any more: the command
//! that installed them decides. `junction run` and `junction chat` end every server the
//! way the specification asks (stdin closed, then SIGTERM, then SIGKILL; HTTP sessions
//! deleted) before they exit with 128 + the signal's number, so no server outlives them.
//! The chat takes SIGINT during a turn as "stop this turn" instead.
//!
//! The line editor keeps the terminal in raw mode while it reads; [`TerminalModes`] puts the
//! terminal back the way it was when the process ends in the middle of a read.

use std::os::fd::AsFd;
use std::process::ExitCode;

use nix::sys::termios::{tcgetattr, tcsetattr, SetArg, Termios};
use tokio::signal::unix::{signal, Signal, SignalKind};

/// A signal that asks the host to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT: Ctrl-C at the terminal.
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP: the terminal went away.
    Hangup,
}

impl Stop {
    /// The signal's name.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "SIGINT",
            Stop::Terminate => "SIGTERM",
            Stop::Hangup => "SIGHUP",
        }
    }

    /// 128 + the signal's number, as a shell reports a process the signal ended.
    pub fn code(self) -> u8 {
        match self {
            Stop::Interrupt => 130,
            Stop::Terminate => 143,
            Stop::Hangup => 129,
        }
    }

    /// [`Stop::code`] as the process's exit code.
    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(self.code())
    }
}

/// The three signals, caught.
#[derive(Debug)]
pub struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl Signals {
    /// Catches SIGINT, SIGTERM and SIGHUP from now on.
    pub fn install() -> std::io::Result<Signals> {
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The next of them to arrive.
    pub async fn recv(&mut self) -> Stop {
        tokio::select! {
            _ = self.interrupt.recv() => Stop::Interrupt,
            _ = self.terminate.recv() => Stop::Terminate,
            _ = self.hangup.recv() => Stop::Hangup,
        }
    }
}

/// The terminal's settings on stdin, when stdin is a terminal.
#[derive(Debug)]
pub struct TerminalModes(Option<Termios>);

impl TerminalModes {
    /// Saves the settings as they are now.
    pub fn save() -> TerminalModes {
        TerminalModes(tcgetattr(std::io::stdin().as_fd()).ok())
    }

    /// Puts the saved settings back (a terminal left in raw mode would not echo).
    pub fn restore(&self) {
        if let Some(modes) = &self.0 {
            let _ = tcsetattr(std::io::stdin().as_fd(), SetArg::TCSANOW, modes);
        }
    }
}
