//! Speaking older revisions: what each handshake revision does not know, and results trimmed
//! to it before they are sent.
//!
//! [`introduced`] is the table (read from the schema.ts of 2024-11-05, 2025-03-26 and
//! 2025-06-18). The other functions apply it: a member the client's revision lacks is
//! dropped; a content block it lacks becomes a text block that says what was there, so the
//! reader still learns of it.

use junction_protocol::capabilities::ServerCapabilities;
use junction_protocol::content::{Annotations, ContentBlock};
use junction_protocol::lifecycle::InitializeResult;
use junction_protocol::prompts::{GetPromptResult, Prompt};
use junction_protocol::resources::{Resource, ResourceTemplate};
use junction_protocol::tools::{CallToolResult, Tool};
use junction_protocol::ProtocolVersion;

/// A member or kind of content that not every revision has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Member {
    /// `ToolAnnotations` on tools.
    ToolAnnotations,
    /// `AudioContent` blocks.
    AudioContent,
    /// The `completions` server capability.
    CompletionsCapability,
    /// `title` on tools, resources, templates, prompts, prompt arguments, implementations.
    Title,
    /// `Tool.outputSchema`.
    OutputSchema,
    /// `CallToolResult.structuredContent`.
    StructuredContent,
    /// `ResourceLink` content blocks.
    ResourceLink,
    /// `Annotations.lastModified`.
    LastModified,
    /// `icons` everywhere.
    Icons,
    /// `Tool.execution`.
    ToolExecution,
    /// `Implementation.description` and `websiteUrl`.
    ImplementationDetails,
}

/// The revision that introduced `member`.
pub(super) const fn introduced(member: Member) -> ProtocolVersion {
    use Member::*;
    use ProtocolVersion::*;
    match member {
        ToolAnnotations | AudioContent | CompletionsCapability => V2025_03_26,
        Title | OutputSchema | StructuredContent | ResourceLink | LastModified => V2025_06_18,
        Icons | ToolExecution | ImplementationDetails => V2025_11_25,
    }
}

fn knows(v: ProtocolVersion, member: Member) -> bool {
    v >= introduced(member)
}

fn keep<T>(v: ProtocolVersion, member: Member, value: &mut Option<T>) {
    if !knows(v, member) {
        *value = None;
    }
}

fn annotations(v: ProtocolVersion, a: &mut Option<Annotations>) {
    if let Some(a) = a {
        keep(v, Member::LastModified, &mut a.last_modified);
    }
}

/// A tool as revision `v` knows it.
pub(super) fn tool(v: ProtocolVersion, mut t: Tool) -> Tool {
    keep(v, Member::Title, &mut t.title);
    keep(v, Member::Icons, &mut t.icons);
    keep(v, Member::OutputSchema, &mut t.output_schema);
    keep(v, Member::ToolAnnotations, &mut t.annotations);
    keep(v, Member::ToolExecution, &mut t.execution);
    t
}

/// A resource as revision `v` knows it.
pub(super) fn resource(v: ProtocolVersion, mut r: Resource) -> Resource {
    keep(v, Member::Title, &mut r.title);
    keep(v, Member::Icons, &mut r.icons);
    annotations(v, &mut r.annotations);
    r
}

/// A resource template as revision `v` knows it.
pub(super) fn template(v: ProtocolVersion, mut t: ResourceTemplate) -> ResourceTemplate {
    keep(v, Member::Title, &mut t.title);
    keep(v, Member::Icons, &mut t.icons);
    annotations(v, &mut t.annotations);
    t
}

/// A prompt as revision `v` knows it.
pub(super) fn prompt(v: ProtocolVersion, mut p: Prompt) -> Prompt {
    keep(v, Member::Title, &mut p.title);
    keep(v, Member::Icons, &mut p.icons);
    for argument in p.arguments.iter_mut().flatten() {
        keep(v, Member::Title, &mut argument.title);
    }
    p
}

/// A content block as revision `v` knows it.
pub(super) fn content(v: ProtocolVersion, block: ContentBlock) -> ContentBlock {
    match block {
        ContentBlock::Audio(a) if !knows(v, Member::AudioContent) => ContentBlock::text(format!(
            "[audio content ({}) omitted: protocol revision {v} cannot carry audio]",
            a.mime_type
        )),
        ContentBlock::ResourceLink(r) if !knows(v, Member::ResourceLink) => {
            ContentBlock::text(format!("Resource: {} <{}>", r.display_name(), r.uri))
        }
        ContentBlock::Text(mut t) => {
            annotations(v, &mut t.annotations);
            ContentBlock::Text(t)
        }
        ContentBlock::Image(mut i) => {
            annotations(v, &mut i.annotations);
            ContentBlock::Image(i)
        }
        ContentBlock::Audio(mut a) => {
            annotations(v, &mut a.annotations);
            ContentBlock::Audio(a)
        }
        ContentBlock::ResourceLink(r) => ContentBlock::ResourceLink(resource(v, r)),
        ContentBlock::Resource(mut e) => {
            annotations(v, &mut e.annotations);
            ContentBlock::Resource(e)
        }
        // A kind newer than this table: no revision here has to lose it.
        other => other,
    }
}

/// A tool result as revision `v` knows it (the text content already carries what
/// `structuredContent` held).
pub(super) fn call_result(v: ProtocolVersion, mut r: CallToolResult) -> CallToolResult {
    keep(v, Member::StructuredContent, &mut r.structured_content);
    r.content = r.content.into_iter().map(|b| content(v, b)).collect();
    r
}

/// A rendered prompt as revision `v` knows it.
pub(super) fn prompt_result(v: ProtocolVersion, mut r: GetPromptResult) -> GetPromptResult {
    for message in &mut r.messages {
        message.content = content(v, message.content.clone());
    }
    r
}

fn capabilities(v: ProtocolVersion, c: &mut ServerCapabilities) {
    keep(v, Member::CompletionsCapability, &mut c.completions);
}

/// An initialize result as revision `v` knows it.
pub(super) fn initialize_result(v: ProtocolVersion, r: &mut InitializeResult) {
    capabilities(v, &mut r.capabilities);
    let info = &mut r.server_info;
    keep(v, Member::Title, &mut info.title);
    keep(v, Member::Icons, &mut info.icons);
    keep(v, Member::ImplementationDetails, &mut info.description);
    keep(v, Member::ImplementationDetails, &mut info.website_url);
}

#[cfg(test)]
mod tests {
    use super::*;
    use junction_protocol::content::Role;
    use junction_protocol::lifecycle::Icon;
    use serde_json::json;
    use ProtocolVersion::*;

    #[test]
    fn the_table_follows_the_schemas() {
        assert_eq!(introduced(Member::AudioContent), V2025_03_26);
        assert_eq!(introduced(Member::ToolAnnotations), V2025_03_26);
        assert_eq!(introduced(Member::StructuredContent), V2025_06_18);
        assert_eq!(introduced(Member::ResourceLink), V2025_06_18);
        assert_eq!(introduced(Member::Icons), V2025_11_25);
    }

    fn full_tool() -> Tool {
        let mut schema = serde_json::Map::new();
        schema.insert("type".into(), json!("object"));
        Tool::new("t", schema.clone())
            .title("T")
            .icon(serde_json::from_value::<Icon>(json!({"src": "https://x/i.png"})).unwrap())
            .output_schema(schema)
            .annotations(junction_protocol::tools::ToolAnnotations::default().read_only(true))
    }

    #[test]
    fn tools_lose_each_member_before_its_revision() {
        let keys = |v| {
            let value = serde_json::to_value(tool(v, full_tool())).unwrap();
            let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
            keys.sort();
            keys
        };
        assert_eq!(keys(V2024_11_05), ["inputSchema", "name"]);
        assert_eq!(keys(V2025_03_26), ["annotations", "inputSchema", "name"]);
        assert_eq!(
            keys(V2025_06_18),
            [
                "annotations",
                "inputSchema",
                "name",
                "outputSchema",
                "title"
            ]
        );
        assert_eq!(
            keys(V2025_11_25),
            [
                "annotations",
                "icons",
                "inputSchema",
                "name",
                "outputSchema",
                "title"
            ]
        );
    }

    #[test]
    fn unknown_content_becomes_text_and_structured_content_is_dropped() {
        let mut result = CallToolResult::content(vec![
            ContentBlock::audio("AAAA", "audio/wav"),
            ContentBlock::resource_link(Resource::new("test://r", "r")),
            ContentBlock::text("hi").with_annotations(
                Annotations::default()
                    .audience([Role::User])
                    .last_modified("2025-01-01T00:00:00Z"),
            ),
        ]);
        result.structured_content = Some(json!({"a": 1}));
        let old = serde_json::to_value(call_result(V2024_11_05, result.clone())).unwrap();
        assert_eq!(
            old,
            json!({"content": [
                {"type": "text", "text": "[audio content (audio/wav) omitted: protocol revision 2024-11-05 cannot carry audio]"},
                {"type": "text", "text": "Resource: r <test://r>"},
                {"type": "text", "text": "hi", "annotations": {"audience": ["user"]}}
            ]})
        );
        let mid = serde_json::to_value(call_result(V2025_03_26, result.clone())).unwrap();
        assert_eq!(mid["content"][0]["type"], "audio");
        assert_eq!(mid["content"][1]["type"], "text");
        assert!(mid.get("structuredContent").is_none());
        let new = call_result(V2025_11_25, result.clone());
        assert_eq!(new, result);
    }
}
