//! The conformance server: every fixture the official MCP conformance suite
//! (`@modelcontextprotocol/conformance` 0.1.16, and 0.2.0-alpha.12 for revision 2026-07-28)
//! calls, with the exact payloads its scenarios describe (see `servers/CONFORMANCE.md`
//! section 2).
//!
//! - [`tools`]: content of every kind, a tool error, logging, progress, sampling,
//!   elicitation (plain, SEP-1034 defaults, SEP-1330 enums), a JSON Schema 2020-12 input
//!   schema, and the SSE polling test (SEP-1699).
//! - [`catalog`]: resources (text, binary, a subscribable one), a template, prompts and
//!   argument completion.
//! - [`rounds`]: the 2026-07-28 fixtures: tools and a prompt that ask for input in rounds,
//!   diagnostic tools (a missing capability, logging, a streamed elicitation), hooks that
//!   change the tool and prompt lists, and a tool with `x-mcp-header` parameters.
//!
//! [`server`] serves every transport; over Streamable HTTP, `test_reconnection` closes its
//! own stream through its context's HTTP controls.
//!
//! ```
//! use junction::client::{Client, ClientOptions};
//! use junction::protocol::tools::CallToolParams;
//! use junction_servers::conformance::SIMPLE_TEXT;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let (client_end, server_end) = junction::transport::memory::pair(Default::default());
//! junction_servers::conformance::server().unwrap().serve(server_end);
//! let client = Client::connect(client_end, ClientOptions::new("doc", "1")).await.unwrap();
//! let result = client
//!     .call_tool(CallToolParams::new("test_simple_text"), Default::default())
//!     .await
//!     .unwrap();
//! assert_eq!(result.content[0].as_text(), Some(SIMPLE_TEXT));
//! # }
//! ```

pub mod catalog;
pub mod rounds;
pub mod tasks;
pub mod tools;

use junction::server::{BuildError, Server};

/// The server's name, as the suite's reference server calls itself.
pub const NAME: &str = "mcp-conformance-test-server";
/// The server's version.
pub const VERSION: &str = "1.0.0";
/// What the server tells a host's model.
pub const INSTRUCTIONS: &str = "Test fixtures of the MCP conformance suites 0.1.16 and \
0.2.0-alpha.12. Every tool returns a fixed payload; call one to see how a client handles that \
kind of content.";

/// A 1x1 RGBA PNG, base64: the suite's reference image.
pub const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A 44-byte PCM WAV header, base64: the suite's reference sound.
pub const WAV_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The text of `test_simple_text`.
pub const SIMPLE_TEXT: &str = "This is a simple text response for testing.";
/// The text of `test_error_handling`'s tool error.
pub const ERROR_TEXT: &str = "This tool intentionally returns an error for testing";
/// The text of `test_reconnection`.
pub const RECONNECTION_TEXT: &str = "Reconnection test completed successfully. If you received \
this, the client properly reconnected after stream closure.";

/// Builds the conformance server. Over Streamable HTTP, `test_reconnection` closes its
/// request's stream (through [`junction::server::Context::http`]) before answering, so the
/// client must resume it; over other transports it simply answers.
pub fn server() -> Result<Server, BuildError> {
    server_with(&crate::Options::default())
}

/// [`server`] with the session bounds of `options` (its database is not used).
pub fn server_with(options: &crate::Options) -> Result<Server, BuildError> {
    let builder = options
        .bound(Server::builder(NAME, VERSION))
        .instructions(INSTRUCTIONS)
        .subscriptions();
    let builder = tools::all()
        .into_iter()
        .chain(rounds::tools())
        .chain(tasks::tools())
        .fold(builder, |b, tool| b.tool(tool));
    catalog::add(builder).prompt(rounds::input_prompt()).build()
}

#[cfg(test)]
mod tests;
