//! The servers' log messages (`notifications/message`), kept in one text file so that they
//! can be read after the fact (`/logs` in the chat, or any pager).
//!
//! Each message is one line: the time (UTC, RFC 3339), the server's config key, the level,
//! the logger in brackets when there is one, and the data (a string as it is, anything else
//! as compact JSON). The line is made safe to show ([`crate::display::line`]) before it is
//! written, so reading the file in a terminal runs no server's escape sequences. The file
//! lives under the user's state directory (`$XDG_STATE_HOME/junction/server.log`, else
//! `~/.local/state/junction/server.log`); once it passes [`MAX_BYTES`] (or the bound given
//! with [`ServerLog::max_bytes`], the config's `junction.maxServerLog`) it is moved to
//! `server.log.1` (replacing the one before) and a fresh file begun.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::display;

/// How large the file may grow before it is set aside, by default.
pub const MAX_BYTES: u64 = 8 * 1024 * 1024;

/// The log file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLog {
    path: PathBuf,
    max_bytes: u64,
}

impl ServerLog {
    /// The file at `path`, set aside past [`MAX_BYTES`].
    pub fn at(path: impl Into<PathBuf>) -> ServerLog {
        ServerLog {
            path: path.into(),
            max_bytes: MAX_BYTES,
        }
    }

    /// Sets how large the file may grow before it is moved to `.1`.
    pub fn max_bytes(mut self, bytes: u64) -> ServerLog {
        self.max_bytes = bytes;
        self
    }

    /// `server.log` in the user's state directory; `None` when neither `XDG_STATE_HOME` nor
    /// `HOME` is set.
    pub fn in_state_dir() -> Option<ServerLog> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let state = match (var("XDG_STATE_HOME"), var("HOME")) {
            (Some(state), _) => PathBuf::from(state),
            (None, Some(home)) => PathBuf::from(home).join(".local").join("state"),
            (None, None) => return None,
        };
        Some(ServerLog::at(state.join("junction").join("server.log")))
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The line a message is kept as, without the time.
    pub fn entry(server: &str, level: &str, logger: Option<&str>, data: &Value) -> String {
        let text = match data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let logger = logger.map(|l| format!(" [{l}]")).unwrap_or_default();
        display::line(&format!("{server} {level}{logger} {text}"))
    }

    /// Appends one message (creating the file and its directory, owner-only, when needed).
    pub fn append(
        &self,
        server: &str,
        level: &str,
        logger: Option<&str>,
        data: &Value,
    ) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if std::fs::metadata(&self.path).is_ok_and(|m| m.len() > self.max_bytes) {
            let mut old = self.path.clone().into_os_string();
            old.push(".1");
            std::fs::rename(&self.path, old)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&self.path)?;
        let line = format!(
            "{} {}\n",
            crate::saved::rfc3339(SystemTime::now()),
            ServerLog::entry(server, level, logger, data)
        );
        file.write_all(line.as_bytes())
    }

    /// Its last `lines` lines (none when there is no file yet).
    pub fn tail(&self, lines: usize) -> std::io::Result<Vec<String>> {
        let file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let mut tail = std::collections::VecDeque::with_capacity(lines + 1);
        for line in std::io::BufReader::new(file).lines() {
            tail.push_back(line?);
            if tail.len() > lines {
                tail.pop_front();
            }
        }
        Ok(tail.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_are_appended_as_safe_lines_and_read_back_from_the_end() {
        let dir = std::env::temp_dir().join(format!("junction-server-log-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let log = ServerLog::at(dir.join("sub").join("server.log"));
        assert!(log.tail(5).unwrap().is_empty());
        log.append("db", "warning", Some("pool"), &json!("slow\u{1b}[2J"))
            .unwrap();
        log.append("db", "error", None, &json!({"code": 7}))
            .unwrap();
        let tail = log.tail(5).unwrap();
        assert_eq!(tail.len(), 2);
        assert!(
            tail[0].ends_with(" db warning [pool] slow\\x1b[2J"),
            "{}",
            tail[0]
        );
        assert!(tail[1].ends_with(r#" db error {"code":7}"#), "{}", tail[1]);
        assert_eq!(log.tail(1).unwrap(), tail[1..]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn past_its_bound_the_file_is_set_aside_and_begun_again() {
        let dir =
            std::env::temp_dir().join(format!("junction-server-log-bound-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let log = ServerLog::at(dir.join("server.log")).max_bytes(150);
        for n in 0..3 {
            log.append("s", "info", None, &json!(format!("{n}{}", "x".repeat(80))))
                .unwrap();
        }
        let old = std::fs::read_to_string(dir.join("server.log.1")).unwrap();
        assert_eq!(old.lines().count(), 2, "{old}");
        let current = log.tail(5).unwrap();
        assert_eq!(current.len(), 1);
        assert!(current[0].contains(" s info 2x"), "{}", current[0]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
