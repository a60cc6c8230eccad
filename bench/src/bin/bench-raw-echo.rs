//! The raw limit of the benchmark: answers the same frames as the MCP echo servers with no
//! MCP logic (no session, no validation, no capability checks), so the gap between a subject
//! and this one is what its MCP machinery costs.
//!
//! ```text
//! bench-raw-echo stdio                     # blocking newline-JSON on one thread
//! bench-raw-echo http ADDR [--sse]         # hyper HTTP/1.1, JSON or one SSE event
//! ```

use std::convert::Infallible;
use std::io::{BufRead, Write};

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Frame<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a str>,
    params: Option<Params>,
}

#[derive(Deserialize)]
struct Params {
    arguments: Option<Arguments>,
}

#[derive(Deserialize)]
struct Arguments {
    message: String,
}

/// The answer to one frame, or `None` for a notification (or a frame that is not JSON).
fn answer(frame: &[u8]) -> Option<Vec<u8>> {
    let frame: Frame = serde_json::from_slice(frame).ok()?;
    let id = frame.id?.get();
    let result = match frame.method {
        Some("initialize") => r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench-raw-echo","version":"0.0.0"}}"#.to_owned(),
        Some("tools/call") => {
            let message = frame.params.and_then(|p| p.arguments).map(|a| a.message).unwrap_or_default();
            let text = serde_json::to_string(&format!("Echo: {message}")).ok()?;
            format!(r#"{{"content":[{{"type":"text","text":{text}}}]}}"#)
        }
        _ => "{}".to_owned(),
    };
    Some(format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#).into_bytes())
}

fn stdio() -> anyhow::Result<()> {
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let mut reader = std::io::BufReader::new(stdin);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        if let Some(mut out) = answer(&line) {
            out.push(b'\n');
            stdout.write_all(&out)?;
        }
        // Flush only when no further request is already buffered: batches under load.
        if !reader.buffer().contains(&b'\n') {
            stdout.flush()?;
        }
    }
}

async fn handle(
    sse: bool,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Ok(status(StatusCode::BAD_REQUEST)),
    };
    let Some(out) = answer(&body) else {
        return Ok(status(StatusCode::ACCEPTED));
    };
    let builder = Response::builder().header("mcp-session-id", "raw");
    let response = if sse {
        let mut event = b"event: message\ndata: ".to_vec();
        event.extend_from_slice(&out);
        event.extend_from_slice(b"\n\n");
        builder
            .header("content-type", "text/event-stream")
            .body(Full::new(Bytes::from(event)))
    } else {
        builder
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(out)))
    };
    Ok(response.unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR)))
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = code;
    response
}

async fn http(addr: &str, sse: bool) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    loop {
        let (tcp, _) = listener.accept().await?;
        tcp.set_nodelay(true)?;
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| handle(sse, request));
            let io = hyper_util::rt::TokioIo::new(tcp);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("stdio") => stdio(),
        Some("http") => {
            let addr = args.get(1).context("http needs ADDR")?.clone();
            let sse = args.iter().any(|a| a == "--sse");
            tokio::runtime::Runtime::new()?.block_on(http(&addr, sse))
        }
        _ => anyhow::bail!("usage: bench-raw-echo stdio | http ADDR [--sse]"),
    }
}
