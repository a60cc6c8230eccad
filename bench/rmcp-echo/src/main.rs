//! rmcp's side of the benchmark: one `echo {message}` tool answering `Echo: <message>`.
//!
//! ```text
//! bench-rmcp-echo stdio [--pipes]                 # rmcp::transport::stdio (or stdio_pipes)
//! bench-rmcp-echo http ADDR [--sessionless] [--sse] [--no-nodelay]
//! ```
//!
//! Over HTTP it prints `listening on http://ADDR/mcp` once bound. TCP_NODELAY is set on
//! every accepted socket (as Junction's server does) unless `--no-nodelay`.

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use rmcp::{schemars, tool, tool_handler, tool_router, ServerHandler, ServiceExt};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    message: String,
}

#[derive(Debug, Clone)]
struct Echo {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Echo {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Echoes the message back")]
    fn echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> String {
        format!("Echo: {message}")
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    match args.first().map(String::as_str) {
        Some("stdio") => {
            let service = if flag("--pipes") {
                Echo::new().serve(rmcp::transport::stdio_pipes()).await
            } else {
                Echo::new().serve(rmcp::transport::stdio()).await
            };
            let service = service.expect("rmcp stdio handshake");
            let _ = service.waiting().await;
        }
        Some("http") => {
            let addr = args.get(1).expect("http ADDR").clone();
            let mut config = StreamableHttpServerConfig::default();
            config.legacy_session_mode = !flag("--sessionless");
            config.json_response = !flag("--sse");
            let service: StreamableHttpService<Echo, LocalSessionManager> =
                StreamableHttpService::new(|| Ok(Echo::new()), Default::default(), config);
            let router = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
            let local = listener.local_addr().expect("local addr");
            println!("listening on http://{local}/mcp");
            let nodelay = !flag("--no-nodelay");
            use axum::serve::ListenerExt;
            let listener = listener.tap_io(move |tcp| {
                let _ = tcp.set_nodelay(nodelay);
            });
            axum::serve(listener, router).await.expect("serve");
        }
        _ => {
            eprintln!("usage: bench-rmcp-echo stdio [--pipes] | http ADDR [--sessionless] [--sse] [--no-nodelay]");
            std::process::exit(2);
        }
    }
}
