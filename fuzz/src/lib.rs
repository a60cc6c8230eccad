//! The entry functions of Junction's fuzz targets: each takes the fuzzer's bytes and drives
//! one parser or endpoint with them, panicking only when an invariant breaks.
//!
//! `fuzz_targets/*.rs` hand libFuzzer's input to these functions; the workspace test
//! `crates/cli/tests/fuzz_corpus.rs` includes this same file and replays the checked-in
//! corpus (`fuzz/corpus/<target>/`) through them on the stable toolchain, so CI checks every
//! target without nightly. The async targets run on a current-thread runtime whose clock is
//! paused: a server that waits for ever is seen at once (the clock jumps to the deadline),
//! and an SSE stream that stays open ends without real waiting.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use junction::server::{prompt, resource, template, tool, Server};
use junction::transport::http::server::{HttpServer, ResponseMode};
use junction::transport::http::sse::{Event, Parser};
use junction::transport::memory;
use junction::uri_template::UriTemplate;
use junction_protocol::elicitation::{ElicitResult, FormParams};
use junction_protocol::jsonrpc::{peek_response_id, Message};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long (on the paused clock) a server has to answer the request that ends an input.
const ANSWER_DEADLINE: Duration = Duration::from_secs(60);

/// The most frames one server input is split into.
const MAX_FRAMES: usize = 16;

/// The most response bytes the HTTP target reads.
const MAX_RESPONSE: usize = 1 << 20;

/// A JSON-RPC frame: whatever decodes must encode to bytes that decode to the same message,
/// and the response-id peek must agree with the full decode.
pub fn jsonrpc(data: &[u8]) {
    let peeked = peek_response_id(data);
    let Ok(message) = Message::decode(data) else {
        return;
    };
    let encoded = message.encode();
    let again = Message::decode(&encoded).expect("an encoded message decodes");
    assert_eq!(again.encode(), encoded, "encoding is stable");
    if let (Some(peeked), Message::Response(response)) = (peeked, &message) {
        assert_eq!(
            Some(&peeked),
            response.id.as_ref(),
            "the peeked id is the response's"
        );
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    /// What to echo.
    text: String,
}

/// A server with one of each feature, so that every family's requests reach a handler.
fn server() -> Server {
    Server::builder("fuzz", "1.0.0")
        .tool(tool("echo", |t: Text| async move { t.text }).description("Echoes"))
        .resource(resource("test://static", "static", |_| async { "text" }))
        .template(
            template("test://items/{id}{?page}", "item", |r| async move {
                format!("item {}", r.var("id").unwrap_or_default())
            })
            .complete("id", junction::server::choices(["1", "2"])),
        )
        .prompt(
            prompt("greet", |p| async move {
                format!("hello {}", p.arg("name").unwrap_or_default())
            })
            .required("name", "who"),
        )
        .subscriptions()
        .build()
        .expect("the fuzz server builds")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a runtime")
}

/// Serves `frames` (the input, one frame per line) after `before`, then sends `last` and
/// waits for its answer: every message the server sends is valid JSON-RPC, and the server
/// answers `last` (or closes the connection) instead of hanging.
fn serve_frames(before: &[&str], data: &[u8], last: &str) {
    runtime().block_on(async {
        let (connection, mut peer) = memory::raw();
        let _session = server().serve(connection);
        for frame in before {
            peer.send(frame.as_bytes()).await;
        }
        for frame in data.split(|b| *b == b'\n').take(MAX_FRAMES) {
            peer.send(frame).await;
        }
        peer.send(last.as_bytes()).await;
        let answered = tokio::time::timeout(ANSWER_DEADLINE, async {
            while let Some(out) = peer.sent.recv().await {
                let bytes = out.message.encode();
                let value: Value =
                    serde_json::from_slice(&bytes).expect("the server sends valid JSON");
                if value["id"] == "fuzz-end" {
                    return;
                }
            }
        })
        .await;
        assert!(
            answered.is_ok(),
            "the server never answered the last request"
        );
    });
}

/// Requests of the handshake family: the input's frames arrive after the handshake.
pub fn server_handshake(data: &[u8]) {
    serve_frames(
        &[
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"sampling":{},"elicitation":{}},"clientInfo":{"name":"fuzz","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ],
        data,
        r#"{"jsonrpc":"2.0","id":"fuzz-end","method":"ping"}"#,
    );
}

/// Requests of the stateless family (2026-07-28): the input's frames arrive with no
/// handshake.
pub fn server_stateless(data: &[u8]) {
    serve_frames(
        &[],
        data,
        r#"{"jsonrpc":"2.0","id":"fuzz-end","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
    );
}

/// The SSE reader: the input fed whole and fed in two pieces (split where its first byte
/// says) gives the same events, and each event read back from its encoding is itself.
pub fn sse(data: &[u8]) {
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let whole = Parser::default().try_feed(rest);
    let at = usize::from(cut) * rest.len() / 256;
    let mut parser = Parser::default();
    let split = parser.try_feed(&rest[..at]).and_then(|mut events| {
        events.extend(parser.try_feed(&rest[at..])?);
        Ok(events)
    });
    if let (Ok(whole), Ok(split)) = (&whole, &split) {
        assert_eq!(whole, split, "chunking does not change the events");
        for event in whole.iter().filter(|e| !e.data.contains('\r')) {
            let back = Parser::default().feed(&event.encode());
            assert_eq!(back.len(), 1, "one event encodes to one event");
            assert_eq!(back[0].data, event.data);
        }
    }
    let _ = Event::message("1", rest).encode();
}

/// The HTTP endpoint, request bytes in: the input is written to a connection served by
/// hyper and the endpoint's router (`/mcp` with sessions, `/s/mcp` sessionless and always
/// answering with event streams), the way [`HttpServer::bind`] serves one.
pub fn http_endpoint(data: &[u8]) {
    runtime().block_on(async {
        let serve = |c| {
            server().serve(c);
        };
        let app = HttpServer::new(serve).router().merge(
            HttpServer::new(serve)
                .sessionless()
                .response_mode(ResponseMode::AlwaysSse)
                .path("/s/mcp")
                .legacy(false)
                .router(),
        );
        let (mut client, server_io) = tokio::io::duplex(64 * 1024);
        let service = hyper_util::service::TowerToHyperService::new(app);
        let connection = tokio::spawn(
            hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(hyper_util::rt::TokioIo::new(server_io), service),
        );
        let _ = tokio::time::timeout(ANSWER_DEADLINE, async {
            let _ = client.write_all(data).await;
            let _ = client.shutdown().await;
            let mut response = Vec::new();
            let mut buf = [0u8; 8192];
            while response.len() < MAX_RESPONSE {
                match client.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => response.extend_from_slice(&buf[..n]),
                }
            }
            if !response.is_empty() {
                assert!(
                    response.starts_with(b"HTTP/1."),
                    "a response starts with a status line: {:?}",
                    String::from_utf8_lossy(&response[..response.len().min(300)])
                );
            }
        })
        .await;
        connection.abort();
    });
}

/// The URI template matcher: the first line is the template, the rest the URI. A match
/// binds only the template's variables.
pub fn uri_template(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (template, uri) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(template) = UriTemplate::parse(template) else {
        return;
    };
    if let Some(bound) = template.matches(uri) {
        let names = template.variables();
        for name in bound.keys() {
            assert!(
                names.contains(&name.as_str()),
                "{name} is a variable of the template"
            );
        }
    }
}

/// The elicitation schema check: `{"params": <elicitation/create form params>, "result":
/// <its result>}`; the submitted content is checked against the requested schema, and
/// filling defaults keeps every submitted value.
pub fn elicitation(data: &[u8]) {
    #[derive(serde::Deserialize)]
    struct Input {
        params: FormParams,
        result: ElicitResult,
    }
    let Ok(input) = serde_json::from_slice::<Input>(data) else {
        return;
    };
    let schema = &input.params.requested_schema;
    let content = input.result.content.unwrap_or_default();
    let _ = schema.check(&content);
    for (_, field) in &schema.properties {
        let _ = field.label();
        let _ = field.allowed_values();
    }
    let filled = junction::client::fill_defaults(schema, content.clone());
    for (name, value) in &content {
        assert_eq!(filled.get(name), Some(value), "a submitted value is kept");
    }
    let _: BTreeMap<_, _> = filled;
}

/// The host's config parser (JSON with comments, `${VAR}` expansion): any text parses or
/// fails with an error, never a panic. Variables whose name starts with `X` are set.
pub fn host_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let env = |name: &str| name.starts_with('X').then(|| format!("value of {name}"));
    if let Ok(config) = junction_host::config::Config::parse(text, Path::new("fuzz.json"), &env) {
        for server in &config.servers {
            assert!(config.server(&server.name).is_some());
        }
    }
}
