//! Junction's side of the benchmark: one `echo {message}` tool answering `Echo: <message>`,
//! served the way the library documents it.
//!
//! ```text
//! bench-junction-echo stdio [--tools N]
//! bench-junction-echo http ADDR [--sessionless] [--sse] [--tools N]
//! ```
//!
//! Over HTTP it prints `listening on http://ADDR/mcp` once bound and serves until killed.
//! `--tools N` registers N - 1 other tools before `echo`, for the cost of a call to a server
//! with many tools (`echo` is the last one listed).

use anyhow::Context as _;
use junction::server::{tool, Server};
use junction::transport::http::server::{HttpServer, ResponseMode};
use junction::transport::stdio;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    message: String,
}

async fn echo(args: EchoArgs) -> String {
    format!("Echo: {}", args.message)
}

fn server(tools: usize) -> anyhow::Result<Server> {
    let mut builder = Server::builder("bench-junction-echo", "0.0.0");
    for i in 1..tools {
        builder = builder.tool(tool(format!("other-{i}"), echo).description("Echoes too"));
    }
    builder
        .tool(tool("echo", echo).description("Echoes the message back"))
        .build()
        .context("building the echo server")
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let tools = match args.iter().position(|a| a == "--tools") {
        Some(at) => args
            .get(at + 1)
            .and_then(|n| n.parse().ok())
            .context("--tools needs a number")?,
        None => 1,
    };
    let server = server(tools)?;
    match args.first().map(String::as_str) {
        Some("stdio") => {
            server
                .serve(stdio::stdio(Default::default()))
                .closed()
                .await;
            Ok(())
        }
        Some("http") => {
            let addr = args.get(1).context("http needs ADDR")?;
            let mut http = HttpServer::new(move |connection| {
                server.serve(connection);
            });
            if flag("--sessionless") {
                http = http.sessionless();
            }
            if flag("--sse") {
                http = http.response_mode(ResponseMode::AlwaysSse);
            }
            let running = http.bind(addr.as_str()).await?;
            println!("listening on {}", running.url("/mcp"));
            std::future::pending::<()>().await;
            Ok(())
        }
        _ => anyhow::bail!(
            "usage: bench-junction-echo stdio [--tools N] | http ADDR [--sessionless] [--sse] [--tools N]"
        ),
    }
}
