//! A PostgreSQL server of the test's own: a throwaway cluster made by Debian's `initdb` in
//! a fresh directory, run by `postgres` as a child of the test on a free 127.0.0.1 port,
//! stopped and removed when dropped. As root (CI), it runs as the `postgres` user that the
//! Debian package creates, since PostgreSQL refuses to run as root. `.ci/run` installs
//! the `postgresql` package; a missing one fails the test and says so.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::ports::free_port;

/// How long the server may take to start (a safety net only).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running PostgreSQL server; the user `junction` may do anything, without a password.
pub struct Postgres {
    child: Option<Child>,
    /// Its port on 127.0.0.1.
    pub port: u16,
    dir: PathBuf,
    owner: Option<(u32, u32)>,
}

/// A PostgreSQL program: from Debian's newest /usr/lib/postgresql/VERSION/bin, else PATH.
fn program(name: &str) -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("bin").join(name))
        .filter(|path| path.is_file())
        .collect();
    versions.sort_by_key(|path| {
        path.components()
            .nth(4)
            .and_then(|c| c.as_os_str().to_str()?.parse::<u32>().ok())
    });
    versions.pop().unwrap_or_else(|| PathBuf::from(name))
}

fn id(flag: &str, user: &str) -> Option<u32> {
    let out = Command::new("id").args([flag, user]).output().ok()?;
    String::from_utf8(out.stdout).ok()?.trim().parse().ok()
}

/// The uid and gid to run PostgreSQL as: the `postgres` user when the test runs as root.
fn owner() -> Option<(u32, u32)> {
    let me = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&me.stdout).trim() != "0" {
        return None;
    }
    let uid = id("-u", "postgres").expect(
        "running as root, the PostgreSQL tests need the `postgres` user of Debian's postgresql package (.ci/run installs it)",
    );
    Some((uid, id("-g", "postgres").unwrap_or(uid)))
}

impl Postgres {
    /// Makes a new cluster and starts it.
    pub fn start() -> Postgres {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("junction-pg-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a directory for the cluster");
        let owner = owner();
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
                .expect("the cluster's directory handed to postgres");
        }
        let data = dir.join("data");
        let out = Command::new(program("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-U", "junction", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"])
            .as_owner(owner)
            .output()
            .unwrap_or_else(|e| panic!("could not run initdb: {e}; the PostgreSQL tests need Debian's postgresql package (.ci/run installs it)"));
        assert!(
            out.status.success(),
            "initdb failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let mut postgres = Postgres {
            child: None,
            port,
            dir,
            owner,
        };
        postgres.restart();
        postgres
    }

    /// `postgres://junction@127.0.0.1:PORT/DB`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://junction@127.0.0.1:{}/{db}", self.port)
    }

    /// Creates the database `name` and returns its URL.
    pub fn database(&self, name: &str) -> String {
        let out = Command::new(program("createdb"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "junction",
                name,
            ])
            .output()
            .expect("createdb runs");
        assert!(
            out.status.success(),
            "createdb {name} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.url(name)
    }

    /// Stops it (a fast shutdown: open connections are closed) and waits.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status();
            let _ = child.wait();
        }
    }

    /// Starts it (again) on its port with the data it had, and waits until it accepts
    /// connections.
    pub fn restart(&mut self) {
        self.stop();
        let log = std::fs::File::create(self.dir.join("postgres.log")).expect("a log file");
        let child = Command::new(program("postgres"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-p", &self.port.to_string(), "-k"])
            .arg(&self.dir)
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
            ])
            .as_owner(self.owner)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("a log file"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("could not start postgres: {e}"));
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let ready = Command::new(program("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "postgres did not start on {}:\n{}",
                self.port,
                std::fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

trait AsOwner {
    fn as_owner(&mut self, owner: Option<(u32, u32)>) -> &mut Self;
}

impl AsOwner for Command {
    fn as_owner(&mut self, owner: Option<(u32, u32)>) -> &mut Self {
        if let Some((uid, gid)) = owner {
            self.uid(uid).gid(gid);
        }
        self
    }
}
