//! The conformance resources, template, prompts and completion (`servers/CONFORMANCE.md`
//! sections 2.3 to 2.5), with the reference server's names, titles and descriptions.

use junction::server::{choices, prompt, resource, template, Blob, ServerBuilder};
use junction_protocol::content::{ContentBlock, Role};
use junction_protocol::prompts::PromptMessage;
use junction_protocol::resources::ResourceContents;

use super::PNG_BASE64;

/// The text of `test://static-text`.
pub const STATIC_TEXT: &str = "This is the content of the static text resource.";
/// The text of `test://watched-resource`.
pub const WATCHED_TEXT: &str = "Watched resource content";
/// The text `test_prompt_with_embedded_resource` embeds under the URI it is given.
pub const EMBEDDED_PROMPT_TEXT: &str = "Embedded resource content for testing.";
/// What `test_prompt_with_arguments`'s `arg1` completes from (the suite's example values).
pub const ARG1_CHOICES: [&str; 3] = ["paris", "park", "party"];

/// Adds the resources, the template and the prompts to `builder`.
pub fn add(builder: ServerBuilder) -> ServerBuilder {
    builder
        .resource(
            resource("test://static-text", "static-text", |_| async {
                STATIC_TEXT
            })
            .title("Static Text Resource")
            .description("A static text resource for testing")
            .mime_type("text/plain"),
        )
        .resource(
            resource("test://static-binary", "static-binary", |_| async {
                Blob(PNG_BASE64.to_owned())
            })
            .title("Static Binary Resource")
            .description("A static binary resource (image) for testing")
            .mime_type("image/png"),
        )
        .resource(
            resource("test://watched-resource", "watched-resource", |_| async {
                WATCHED_TEXT
            })
            .title("Watched Resource")
            .description("A resource that auto-updates every 3 seconds")
            .mime_type("text/plain"),
        )
        .template(
            template("test://template/{id}/data", "template", |r| async move {
                let id = r.var("id").unwrap_or_default();
                // Compact JSON in the order id, templateTest, data, as the reference writes it.
                format!(
                    r#"{{"id":{id},"templateTest":true,"data":{data}}}"#,
                    id = serde_json::Value::from(id),
                    data = serde_json::Value::from(format!("Data for ID: {id}")),
                )
            })
            .title("Resource Template")
            .description("A resource template with parameter substitution")
            .mime_type("application/json"),
        )
        .prompt(
            prompt("test_simple_prompt", |_| async {
                "This is a simple prompt for testing.".to_owned()
            })
            .title("Simple Test Prompt")
            .description("A simple prompt without arguments"),
        )
        .prompt(
            prompt("test_prompt_with_arguments", |p| async move {
                format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    p.arg("arg1").unwrap_or_default(),
                    p.arg("arg2").unwrap_or_default()
                )
            })
            .title("Prompt With Arguments")
            .description("A prompt with required arguments")
            .required("arg1", "First test argument")
            .required("arg2", "Second test argument")
            .complete("arg1", choices(ARG1_CHOICES)),
        )
        .prompt(
            prompt("test_prompt_with_embedded_resource", |p| async move {
                let uri = p.arg("resourceUri").unwrap_or_default();
                let contents = ResourceContents::text(uri, "text/plain", EMBEDDED_PROMPT_TEXT);
                vec![
                    PromptMessage::new(Role::User, ContentBlock::embedded(contents)),
                    PromptMessage::user_text("Please process the embedded resource above."),
                ]
            })
            .title("Prompt With Embedded Resource")
            .description("A prompt that includes an embedded resource")
            .required("resourceUri", "URI of the resource to embed"),
        )
        .prompt(
            prompt("test_prompt_with_image", |_| async {
                vec![
                    PromptMessage::new(Role::User, ContentBlock::image(PNG_BASE64, "image/png")),
                    PromptMessage::user_text("Please analyze the image above."),
                ]
            })
            .title("Prompt With Image")
            .description("A prompt that includes image content"),
        )
}
