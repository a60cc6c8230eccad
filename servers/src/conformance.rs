//! The conformance server: the fixtures the official MCP conformance suite
//! (`@modelcontextprotocol/conformance` 0.1.16) calls, with the exact payloads its scenarios
//! describe (see `servers/CONFORMANCE.md`).
//!
//! It offers the tools the framework can express today: text, image, audio, embedded
//! resource and mixed content, a tool error, progress, and the stdio form of the
//! reconnection test. The fixtures that need resources, prompts, completion, logging,
//! sampling or elicitation join when the framework offers them.
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

use std::time::Duration;

use junction::server::{tool, BuildError, Context, Server};
use junction_protocol::content::ContentBlock;
use junction_protocol::resources::ResourceContents;
use junction_protocol::tools::CallToolResult;
use junction_protocol::ProgressToken;

/// The server's name, as the suite's reference server calls itself.
pub const NAME: &str = "mcp-conformance-test-server";
/// The server's version.
pub const VERSION: &str = "1.0.0";
/// What the server tells a host's model.
pub const INSTRUCTIONS: &str = "Test fixtures of the MCP conformance suite 0.1.16. Every tool \
returns a fixed payload; call one to see how a client handles that kind of content.";

/// A 1x1 RGBA PNG, base64: the suite's reference image.
pub const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A 44-byte PCM WAV header, base64: the suite's reference sound.
pub const WAV_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The text of `test_simple_text`.
pub const SIMPLE_TEXT: &str = "This is a simple text response for testing.";
/// The text of `test_error_handling`'s tool error.
pub const ERROR_TEXT: &str = "This tool intentionally returns an error for testing";
/// The text of `test_reconnection` over a transport that keeps its stream open.
pub const RECONNECTION_TEXT: &str = "Reconnection test completed successfully. If you received \
this, the client properly reconnected after stream closure.";

/// The pause between two progress steps of `test_tool_with_progress`.
const PROGRESS_STEP: Duration = Duration::from_millis(50);

// The arguments of every fixture tool: none (unknown ones are ignored, as the reference does).
// Not documented with `///`, which would become the listed schema's description.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct NoArguments {}

/// Builds the conformance server.
pub fn server() -> Result<Server, BuildError> {
    Server::builder(NAME, VERSION)
        .instructions(INSTRUCTIONS)
        .tool(
            tool("test_simple_text", simple_text).description("Tests simple text content response"),
        )
        .tool(tool("test_image_content", image_content).description("Tests image content response"))
        .tool(tool("test_audio_content", audio_content).description("Tests audio content response"))
        .tool(
            tool("test_embedded_resource", embedded_resource)
                .description("Tests embedded resource content response"),
        )
        .tool(
            tool("test_multiple_content_types", multiple_content_types)
                .description("Tests response with multiple content types (text, image, resource)"),
        )
        .tool(
            tool("test_error_handling", error_handling)
                .description("Tests error response handling"),
        )
        .tool(
            tool("test_tool_with_progress", with_progress)
                .description("Tests tool that reports progress notifications"),
        )
        .tool(tool("test_reconnection", reconnection).description(
            "Tests SSE stream disconnection and client reconnection (SEP-1699). Server will \
             close the stream mid-call and send the result after client reconnects.",
        ))
        .build()
}

async fn simple_text(_: NoArguments) -> &'static str {
    SIMPLE_TEXT
}

async fn image_content(_: NoArguments) -> ContentBlock {
    ContentBlock::image(PNG_BASE64, "image/png")
}

async fn audio_content(_: NoArguments) -> ContentBlock {
    ContentBlock::audio(WAV_BASE64, "audio/wav")
}

async fn embedded_resource(_: NoArguments) -> ContentBlock {
    ContentBlock::embedded(ResourceContents::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    ))
}

async fn multiple_content_types(_: NoArguments) -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(PNG_BASE64, "image/png"),
        ContentBlock::embedded(ResourceContents::text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )),
    ]
}

async fn error_handling(_: NoArguments) -> CallToolResult {
    CallToolResult::error(ERROR_TEXT)
}

/// Reports 0, 50 and 100 of 100, 50 ms apart, then answers with the progress token as text
/// (as the reference does), so a client can check which token the server saw.
///
/// It pauses once more after the last update: the TypeScript SDK handles a notification a
/// microtask after reading it but a response at once, so an update that reaches it in the
/// same read as the result is dropped ("unknown token").
async fn with_progress(context: Context, _: NoArguments) -> String {
    for step in [0u32, 50, 100] {
        context.progress(
            f64::from(step),
            Some(100.0),
            Some(format!("Completed step {step} of 100")),
        );
        tokio::time::sleep(PROGRESS_STEP).await;
    }
    match context.request().progress_token() {
        Some(ProgressToken::Number(n)) => n.to_string(),
        Some(ProgressToken::String(s)) => s.clone(),
        None => "No progress token was sent, so no progress was reported.".to_owned(),
    }
}

/// Over stdio the stream never closes mid-call, so the result simply arrives.
async fn reconnection(_: NoArguments) -> &'static str {
    RECONNECTION_TEXT
}

#[cfg(test)]
mod tests;
