//! A minimal HTTP/1.1 client over one keep-alive TCP connection with TCP_NODELAY: enough of
//! the protocol for Streamable HTTP (Content-Length and chunked bodies, JSON and SSE
//! answers), and cheap, so that the load generator is not what a run measures.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context as _};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long a server may take to answer one request before the run fails.
const STALL: Duration = Duration::from_secs(30);

/// One answer: status, session id if any, and the JSON messages it carried.
#[derive(Debug)]
pub struct Reply {
    /// The HTTP status code.
    pub status: u16,
    /// The `Mcp-Session-Id` header.
    pub session: Option<String>,
    /// The body's JSON-RPC messages (one for JSON, each `data` of an event stream).
    pub messages: Vec<Vec<u8>>,
}

/// One keep-alive connection.
pub struct Connection {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
    /// Where unread bytes start in `buf`.
    pos: usize,
    request: Vec<u8>,
}

impl Connection {
    /// A connection to `addr`, opened on first use.
    pub fn new(addr: SocketAddr) -> Connection {
        Connection {
            addr,
            stream: None,
            buf: Vec::with_capacity(16 * 1024),
            pos: 0,
            request: Vec::with_capacity(1024),
        }
    }

    /// POSTs `body` to `/mcp` with `headers`; retries once on a fresh connection when a
    /// reused one turns out closed.
    pub async fn post(&mut self, headers: &[(&str, &str)], body: &[u8]) -> anyhow::Result<Reply> {
        let reused = self.stream.is_some();
        match self.exchange(headers, body).await {
            Ok(reply) => Ok(reply),
            Err(_) if reused => {
                self.stream = None;
                self.exchange(headers, body).await
            }
            Err(e) => Err(e),
        }
    }

    async fn exchange(&mut self, headers: &[(&str, &str)], body: &[u8]) -> anyhow::Result<Reply> {
        if self.stream.is_none() {
            let stream = TcpStream::connect(self.addr).await?;
            stream.set_nodelay(true)?;
            self.stream = Some(stream);
            self.buf.clear();
            self.pos = 0;
        }
        self.request.clear();
        self.request
            .extend_from_slice(b"POST /mcp HTTP/1.1\r\nHost: ");
        self.request
            .extend_from_slice(self.addr.to_string().as_bytes());
        self.request.extend_from_slice(
            b"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
        );
        for (name, value) in headers {
            self.request.extend_from_slice(name.as_bytes());
            self.request.extend_from_slice(b": ");
            self.request.extend_from_slice(value.as_bytes());
            self.request.extend_from_slice(b"\r\n");
        }
        self.request
            .extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        self.request.extend_from_slice(body);
        let request = std::mem::take(&mut self.request);
        let written = self.stream_mut()?.write_all(&request).await;
        self.request = request;
        written?;
        tokio::time::timeout(STALL, self.read_reply())
            .await
            .context("the server stopped answering")?
    }

    fn stream_mut(&mut self) -> anyhow::Result<&mut TcpStream> {
        self.stream.as_mut().context("not connected")
    }

    /// Reads more bytes; fails at EOF.
    async fn fill(&mut self) -> anyhow::Result<()> {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        let len = self.buf.len();
        self.buf.resize(len + 16 * 1024, 0);
        let stream = self.stream.as_mut().context("not connected")?;
        let read = stream.read(&mut self.buf[len..]).await;
        let read = match read {
            Ok(n) => n,
            Err(e) => {
                self.buf.truncate(len);
                return Err(e.into());
            }
        };
        self.buf.truncate(len + read);
        if read == 0 {
            bail!("the server closed the connection");
        }
        Ok(())
    }

    /// The next `\r\n`-terminated line (without it).
    async fn line(&mut self) -> anyhow::Result<Vec<u8>> {
        loop {
            if let Some(at) = find(&self.buf[self.pos..], b"\r\n") {
                let line = self.buf[self.pos..self.pos + at].to_vec();
                self.pos += at + 2;
                return Ok(line);
            }
            self.fill().await?;
        }
    }

    async fn exact(&mut self, n: usize, into: &mut Vec<u8>) -> anyhow::Result<()> {
        while self.buf.len() - self.pos < n {
            self.fill().await?;
        }
        into.extend_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(())
    }

    async fn read_reply(&mut self) -> anyhow::Result<Reply> {
        let status_line = self.line().await?;
        let status = std::str::from_utf8(&status_line)
            .ok()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .with_context(|| {
                format!("bad status line: {}", String::from_utf8_lossy(&status_line))
            })?;
        let (mut length, mut chunked, mut sse, mut close, mut session) =
            (None, false, false, false, None);
        loop {
            let line = self.line().await?;
            if line.is_empty() {
                break;
            }
            let text = String::from_utf8_lossy(&line);
            let Some((name, value)) = text.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "content-type" => sse = value.starts_with("text/event-stream"),
                "connection" => close = value.eq_ignore_ascii_case("close"),
                "mcp-session-id" => session = Some(value.to_owned()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                let size_line = self.line().await?;
                let size = std::str::from_utf8(&size_line)
                    .ok()
                    .and_then(|l| usize::from_str_radix(l.split(';').next()?.trim(), 16).ok())
                    .context("bad chunk size")?;
                if size == 0 {
                    while !self.line().await?.is_empty() {}
                    break;
                }
                self.exact(size, &mut body).await?;
                self.line().await?;
            }
        } else if let Some(n) = length {
            self.exact(n, &mut body).await?;
        } else if !matches!(status, 202 | 204 | 304) {
            // Delimited by the end of the connection.
            loop {
                body.extend_from_slice(&self.buf[self.pos..]);
                self.pos = self.buf.len();
                if self.fill().await.is_err() {
                    break;
                }
            }
            close = true;
        }
        if close {
            self.stream = None;
        }
        let messages = if sse {
            events(&body)
        } else if body.is_empty() {
            Vec::new()
        } else {
            vec![body]
        };
        Ok(Reply {
            status,
            session,
            messages,
        })
    }
}

/// The `data` of each event of an event stream (events with empty data skipped).
fn events(body: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut data: Vec<u8> = Vec::new();
    for line in body.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            if !data.is_empty() {
                out.push(std::mem::take(&mut data));
            }
        } else if let Some(rest) = line.strip_prefix(b"data:") {
            if !data.is_empty() {
                data.push(b'\n');
            }
            data.extend_from_slice(rest.strip_prefix(b" ").unwrap_or(rest));
        }
    }
    if !data.is_empty() {
        out.push(data);
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_events_data_is_one_message_and_priming_events_are_skipped() {
        let body = b"id: 1\nretry: 1000\ndata: \n\nevent: message\ndata: {\"a\":1}\n\ndata: {\"b\":\r\ndata: 2}\r\n\r\n";
        assert_eq!(
            events(body),
            vec![b"{\"a\":1}".to_vec(), b"{\"b\":\n2}".to_vec()]
        );
    }
}
