//! Real Redis, nginx, PostgreSQL and `junction serve` instances on 127.0.0.1 for the
//! scale-out tests: each fixture has its own ports and data directory, and stops what it
//! started when dropped. The daemons come from Debian's `redis-server`, `nginx` and
//! `postgresql` (installed by `.ci/run`); a missing one fails the test and says so.

#![allow(dead_code)] // each test uses part of this module

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use junction_test_support::cli::spawn_serve;
use junction_test_support::ports::free_port;
use serde_json::{json, Value};

/// How long a daemon may take to start before the test gives up (a safety net only).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A fresh directory for one fixture's files.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "junction-{name}-{}-{}",
        std::process::id(),
        free_port()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}

fn spawn(program: &str, args: &[&str], log: &Path) -> Child {
    let log = std::fs::File::create(log).expect("a log file");
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("a log file"))
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| {
            panic!("could not start {program}: {e}; the scale-out tests need Debian's redis-server and nginx (.ci/run installs them)")
        })
}

fn wait_for_port(port: u16, what: &str, log: &Path) {
    let deadline = Instant::now() + START_TIMEOUT;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{what} did not start listening on {port}:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// A Redis server of its own, without persistence.
pub struct Redis {
    child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
}

impl Redis {
    pub fn start() -> Redis {
        let dir = scratch("redis");
        let mut redis = Redis {
            child: None,
            port: free_port(),
            dir,
        };
        redis.restart();
        redis
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Stops it (SIGKILL: what it held is gone).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            stop(&mut child);
        }
    }

    /// What `redis-cli` prints for one command against it (raw, one value a line).
    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli runs");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Starts it again on the same port, empty.
    pub fn restart(&mut self) {
        self.kill();
        let port = self.port.to_string();
        let dir = self.dir.to_string_lossy().into_owned();
        let log = self.dir.join("redis.log");
        let args = [
            "--port",
            &port,
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            &dir,
        ];
        self.child = Some(spawn("redis-server", &args, &log));
        wait_for_port(self.port, "redis-server", &log);
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One `junction serve NAME --http 127.0.0.1:PORT FLAGS...`, on a port it keeps across
/// restarts.
pub struct Instance {
    child: Option<Child>,
    pub port: u16,
    name: String,
    flags: Vec<String>,
}

impl Instance {
    pub fn start(name: &str, flags: &[String]) -> Instance {
        let mut instance = Instance {
            child: None,
            port: free_port(),
            name: name.to_owned(),
            flags: flags.to_vec(),
        };
        instance.restart();
        instance
    }

    /// The endpoint's URL on this instance directly.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// SIGKILL: no chance to finish anything.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            stop(&mut child);
        }
    }

    /// SIGTERM, and waits for it to exit.
    pub fn terminate(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let _ = child.wait();
        }
    }

    /// Starts it (again) on its port, and waits for its `listening on` line.
    pub fn restart(&mut self) {
        self.kill();
        let addr = format!("127.0.0.1:{}", self.port);
        let (child, line) = spawn_serve(&self.name, &addr, &self.flags);
        assert!(
            line.starts_with("listening on "),
            "junction serve did not start: {line:?}"
        );
        self.child = Some(child);
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

/// nginx as a round-robin load balancer (no stickiness) in front of `upstreams`.
pub struct Nginx {
    child: Child,
    pub port: u16,
    dir: PathBuf,
}

impl Nginx {
    pub fn start(upstreams: &[u16]) -> Nginx {
        Nginx::cutting_after(upstreams, 300)
    }

    /// [`Nginx::start`], ending a response that stays silent for `read_timeout` seconds,
    /// as proxies in front of servers do with long streams.
    pub fn cutting_after(upstreams: &[u16], read_timeout: u32) -> Nginx {
        let dir = scratch("nginx");
        let port = free_port();
        let servers: String = upstreams
            .iter()
            .map(|p| format!("    server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;\n"))
            .collect();
        let d = dir.display();
        // Buffering off: SSE events must pass as they come. A connection refused by a
        // stopped instance is retried on the next one (idempotent requests only, which is
        // nginx's default: a POST is never sent twice).
        let conf = format!(
            "user root;
worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {d}/body;
  proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi;
  scgi_temp_path {d}/scgi;
  upstream junction {{
{servers}    keepalive 64;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://junction;
      proxy_http_version 1.1;
      proxy_set_header Connection \"\";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_cache off;
      proxy_read_timeout {read_timeout}s;
      proxy_next_upstream error timeout;
    }}
  }}
}}
"
        );
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf).expect("nginx.conf written");
        let log = dir.join("stderr.log");
        let prefix = dir.to_string_lossy().into_owned();
        let conf = conf_path.to_string_lossy().into_owned();
        let child = spawn("nginx", &["-p", &prefix, "-c", &conf], &log);
        wait_for_port(port, "nginx", &log);
        Nginx { child, port, dir }
    }

    /// The endpoint's URL through the load balancer.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        stop(&mut self.child);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Redis, `n` instances of `server` sharing it (plus `flags`), and nginx in front.
pub struct Cluster {
    pub nginx: Nginx,
    pub instances: Vec<Instance>,
    pub redis: Redis,
}

impl Cluster {
    pub fn start(server: &str, n: usize, flags: &[String]) -> Cluster {
        let redis = Redis::start();
        let mut all = vec!["--redis".to_owned(), redis.url()];
        all.extend_from_slice(flags);
        let instances: Vec<Instance> = (0..n).map(|_| Instance::start(server, &all)).collect();
        let ports: Vec<u16> = instances.iter().map(|i| i.port).collect();
        let nginx = Nginx::start(&ports);
        Cluster {
            nginx,
            instances,
            redis,
        }
    }
}

/// One SSE event as the client sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    pub id: Option<String>,
    pub data: String,
}

/// A small MCP client over raw HTTP: enough to steer sessions and streams exactly.
#[derive(Clone)]
pub struct Mcp {
    pub http: reqwest::Client,
    pub session: Option<String>,
    /// The bearer token sent with every request, if any.
    pub token: Option<String>,
}

pub const VERSION: &str = "2025-11-25";

impl Mcp {
    pub fn new() -> Mcp {
        Mcp {
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(4)
                .build()
                .expect("an HTTP client"),
            session: None,
            token: None,
        }
    }

    /// Adds the session id and the bearer token, when there are.
    fn credentials(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if let Some(session) = &self.session {
            request = request.header("MCP-Session-Id", session);
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        request
    }

    fn post(&self, url: &str, body: &Value) -> reqwest::RequestBuilder {
        self.credentials(
            self.http
                .post(url)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", VERSION)
                .body(body.to_string()),
        )
    }

    /// `initialize` then `notifications/initialized`, each at `url`.
    pub async fn initialize(&mut self, url: &str, capabilities: Value) -> Value {
        let result = self.open(url, capabilities).await;
        self.notify(url, "notifications/initialized", json!({}))
            .await;
        result
    }

    /// `initialize` at `url`, without `notifications/initialized`: its result.
    pub async fn open(&mut self, url: &str, capabilities: Value) -> Value {
        let response = self
            .post(
                url,
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": VERSION, "capabilities": capabilities,
                    "clientInfo": {"name": "scale-test", "version": "1"}}}),
            )
            .send()
            .await
            .expect("initialize sent");
        assert_eq!(response.status(), 200, "initialize answered");
        self.session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        assert!(self.session.is_some(), "a session id came back");
        read_reply(response).await
    }

    /// POSTs a notification; asserts `202`.
    pub async fn notify(&self, url: &str, method: &str, params: Value) {
        let status = self.notify_status(url, method, params).await;
        assert_eq!(status, 202, "{method} accepted");
    }

    /// POSTs a notification; the HTTP status.
    pub async fn notify_status(&self, url: &str, method: &str, params: Value) -> u16 {
        self.post(
            url,
            &json!({"jsonrpc": "2.0", "method": method, "params": params}),
        )
        .send()
        .await
        .expect("notification sent")
        .status()
        .as_u16()
    }

    /// POSTs a response to the server's request `id`; asserts `202`.
    pub async fn respond(&self, url: &str, id: &Value, result: Value) {
        let response = self
            .post(url, &json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .send()
            .await
            .expect("response sent");
        assert_eq!(response.status(), 202, "response accepted");
    }

    /// A request; its response message (from a JSON body or the end of an event stream).
    pub async fn request(&self, url: &str, id: u64, method: &str, params: Value) -> Value {
        let response = self.send(url, id, method, params).await;
        assert_eq!(response.status(), 200, "{method} answered");
        read_reply(response).await
    }

    /// A request, its HTTP response as it comes.
    pub async fn send(&self, url: &str, id: u64, method: &str, params: Value) -> reqwest::Response {
        self.post(
            url,
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        )
        .send()
        .await
        .expect("request sent")
    }

    /// `GET` with `Last-Event-ID`: the resumed stream.
    pub async fn resume(&self, url: &str, last: &str) -> reqwest::Response {
        self.get(url, Some(last)).await
    }

    /// `GET` without `Last-Event-ID`: the session's standalone stream; asserts `200`.
    pub async fn listen(&self, url: &str) -> SseReader {
        let response = self.get(url, None).await;
        assert_eq!(response.status(), 200, "the standalone stream opens");
        SseReader::new(response)
    }

    async fn get(&self, url: &str, last: Option<&str>) -> reqwest::Response {
        let mut request = self
            .http
            .get(url)
            .header("Accept", "text/event-stream")
            .header("MCP-Protocol-Version", VERSION);
        if let Some(last) = last {
            request = request.header("Last-Event-ID", last);
        }
        self.credentials(request).send().await.expect("GET sent")
    }

    /// `DELETE`: ends the session; the HTTP status.
    pub async fn delete(&self, url: &str) -> u16 {
        let request = self
            .http
            .delete(url)
            .header("MCP-Protocol-Version", VERSION);
        self.credentials(request)
            .send()
            .await
            .expect("DELETE sent")
            .status()
            .as_u16()
    }
}

/// The response message of a reply, JSON body or event stream.
pub async fn read_reply(response: reqwest::Response) -> Value {
    let is_sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_sse {
        let body = response.bytes().await.expect("a body");
        return serde_json::from_slice(&body).expect("a JSON body");
    }
    let mut stream = SseReader::new(response);
    while let Some(event) = stream.next().await {
        if let Ok(message) = serde_json::from_str::<Value>(&event.data) {
            if message.get("method").is_none() {
                return message;
            }
        }
    }
    panic!("the event stream ended without a response");
}

/// Reads SSE events off a response body.
pub struct SseReader {
    response: reqwest::Response,
    buffer: String,
}

impl SseReader {
    pub fn new(response: reqwest::Response) -> SseReader {
        SseReader {
            response,
            buffer: String::new(),
        }
    }

    /// The next event, or `None` when the stream ends (or its connection breaks).
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = SseEvent {
                    id: None,
                    data: String::new(),
                };
                let mut any = false;
                for line in block.lines() {
                    if let Some(id) = line.strip_prefix("id:") {
                        event.id = Some(id.trim().to_owned());
                        any = true;
                    } else if let Some(data) = line.strip_prefix("data:") {
                        if !event.data.is_empty() {
                            event.data.push('\n');
                        }
                        event.data.push_str(data.strip_prefix(' ').unwrap_or(data));
                        any = true;
                    }
                }
                if any {
                    return Some(event);
                }
                continue;
            }
            match self.response.chunk().await {
                Ok(Some(chunk)) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                _ => return None,
            }
        }
    }
}
