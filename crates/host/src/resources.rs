//! Resources the user can attach to the conversation as `@server:uri`.
//!
//! [`attachables`] lists every server's resources and resource templates; attaching reads
//! the resource and puts its content into the conversation as a context message (see
//! [`crate::Host::attach`]).
//!
//! ```
//! use junction_host::resources::parse_attachment;
//! assert_eq!(parse_attachment("@library:library://books/1").unwrap(), ("library", "library://books/1"));
//! ```

use crate::servers::Servers;

/// Why an attachment reference could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("an attachment looks like `@server:uri`, not {0:?}")]
pub struct AttachmentSyntax(pub String);

/// Something that can be attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachable {
    /// The server's config key.
    pub server: String,
    /// The URI, or for a template its URI template (to be filled in before attaching).
    pub uri: String,
    /// Whether `uri` is a template.
    pub template: bool,
    /// A name for people.
    pub name: String,
    /// What it is.
    pub description: Option<String>,
    /// Its MIME type, if declared.
    pub mime_type: Option<String>,
}

impl Attachable {
    /// How the user writes it: `@server:uri`.
    pub fn reference(&self) -> String {
        format!("@{}:{}", self.server, self.uri)
    }
}

/// Splits `@server:uri` into the server key and the URI.
pub fn parse_attachment(text: &str) -> Result<(&str, &str), AttachmentSyntax> {
    let syntax = || AttachmentSyntax(text.to_owned());
    let body = text.trim().strip_prefix('@').ok_or_else(syntax)?;
    let (server, uri) = body.split_once(':').ok_or_else(syntax)?;
    if server.is_empty() || uri.is_empty() {
        return Err(syntax());
    }
    Ok((server, uri))
}

/// Every resource and template of every server, by server then URI.
pub fn attachables(servers: &Servers) -> Vec<Attachable> {
    let mut all = Vec::new();
    for server in servers.iter() {
        for r in server.resources() {
            all.push(Attachable {
                server: server.name.clone(),
                uri: r.uri.clone(),
                template: false,
                name: r.display_name().to_owned(),
                description: r.description.clone(),
                mime_type: r.mime_type.clone(),
            });
        }
        for t in server.templates() {
            all.push(Attachable {
                server: server.name.clone(),
                uri: t.uri_template.clone(),
                template: true,
                name: t.title.clone().unwrap_or_else(|| t.name.clone()),
                description: t.description.clone(),
                mime_type: t.mime_type.clone(),
            });
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_ends_at_the_first_colon_and_the_uri_keeps_its_own() {
        assert_eq!(
            parse_attachment("@fs:file:///tmp/a.txt").unwrap(),
            ("fs", "file:///tmp/a.txt")
        );
        assert!(parse_attachment("fs:file:///a").is_err());
        assert!(parse_attachment("@fs").is_err());
        assert!(parse_attachment("@:x").is_err());
        assert!(parse_attachment("@fs:").is_err());
    }

    #[test]
    fn references_are_written_back_as_typed() {
        let a = Attachable {
            server: "fs".into(),
            uri: "file:///a".into(),
            template: false,
            name: "a".into(),
            description: None,
            mime_type: None,
        };
        assert_eq!(a.reference(), "@fs:file:///a");
    }
}
