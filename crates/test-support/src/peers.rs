//! Where the external interop peers are (Node, the conformance suite, the SDKs, the
//! Inspector): paths that `scripts/test` exports as `JUNCTION_*` variables.

/// An interop peer's path from the environment that `scripts/test` sets up.
pub fn peer(variable: &str) -> String {
    match std::env::var(variable) {
        Ok(value) if !value.is_empty() => value,
        _ => panic!(
            "{variable} is not set: the interop tests need the pinned external peers. Run the \
             tests with scripts/test (it installs them and exports JUNCTION_*), or source the \
             env.sh that scripts/install-tools wrote before running cargo test"
        ),
    }
}

/// `tests-interop/py-server.py`: a Python SDK (`MCPServer`) server that speaks 2026-07-28.
pub const PY_SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests-interop/py-server.py"
);

/// A peer server process over HTTP on 127.0.0.1, killed when dropped.
#[derive(Debug)]
pub struct HttpPeer {
    child: std::process::Child,
    /// The port it listens on.
    pub port: u16,
}

impl HttpPeer {
    /// Its MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts [`PY_SERVER`] over Streamable HTTP on a port it binds itself (and prints), so the
/// port is the server's before the test uses it: a port probed free and handed to the
/// server later can be taken in between by another test's socket.
pub fn python_http_server() -> HttpPeer {
    use std::io::BufRead;
    let mut child = std::process::Command::new(peer("JUNCTION_PYTHON"))
        .args([PY_SERVER, "http", "0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("python starts");
    let mut line = String::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
    }
    let port = line.trim().parse().unwrap_or_else(|_| {
        let _ = child.kill();
        let status = child.wait();
        panic!("py-server.py did not print its port (it printed {line:?}; {status:?})")
    });
    HttpPeer { child, port }
}
