//! A spinner on the current line while the model thinks: a thread redraws it every tenth of
//! a second while it is on, and wipes it (carriage return, erase line) when it is turned
//! off, before whatever comes next is written. Only used when stdout is a terminal.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME: Duration = Duration::from_millis(100);

#[derive(Default)]
struct State {
    on: bool,
    /// Whether a frame is on the screen and must be wiped.
    drawn: bool,
}

/// The spinner; its thread lives as long as the process.
pub struct Spinner {
    state: Arc<(Mutex<State>, Condvar)>,
}

impl Spinner {
    /// Starts the drawing thread, spinner off.
    pub fn start() -> Spinner {
        let state = Arc::new((Mutex::new(State::default()), Condvar::new()));
        let shared = state.clone();
        std::thread::spawn(move || {
            let (lock, wake) = &*shared;
            let mut frame = 0;
            let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if !state.on {
                    state = wake.wait(state).unwrap_or_else(PoisonError::into_inner);
                    continue;
                }
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "\r{} thinking…", FRAMES[frame % FRAMES.len()]);
                let _ = out.flush();
                drop(out);
                state.drawn = true;
                frame += 1;
                state = wake
                    .wait_timeout(state, FRAME)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
        });
        Spinner { state }
    }

    /// Turns it on or off; off wipes it from the line at once.
    pub fn set(&self, on: bool) {
        let (lock, wake) = &*self.state;
        let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
        state.on = on;
        if !on && std::mem::take(&mut state.drawn) {
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "\r\x1b[2K");
            let _ = out.flush();
        }
        wake.notify_all();
    }
}
