//! Reading a `WWW-Authenticate: Bearer ...` (or `DPoP ...`) challenge (RFC 6750 §3,
//! RFC 9728 §5.1, RFC 9449 §7.1).
//!
//! A `401` or `403` from a protected MCP server names what the client needs: the
//! `resource_metadata` URL to discover the authorization server from, the `scope` the
//! request requires, and for a `403` the `error` (`insufficient_scope` starts a step-up;
//! `use_dpop_nonce` asks for a proof with the server's nonce).
//!
//! ```
//! use junction::auth::Challenge;
//!
//! let c = Challenge::parse(r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource""#);
//! assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
//! assert_eq!(c.scopes(), vec!["files:read", "files:write"]);
//! assert!(c.resource_metadata.is_some());
//! ```

/// The parameters of a Bearer challenge; absent ones are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// Where the protected resource metadata document is (RFC 9728 §5.1).
    pub resource_metadata: Option<String>,
    /// The scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// The error code (`invalid_token`, `insufficient_scope`, ...).
    pub error: Option<String>,
    /// The server's explanation, for people.
    pub error_description: Option<String>,
}

impl Challenge {
    /// Reads the first `Bearer` or `DPoP` challenge of a header value; other schemes are
    /// skipped, and a value with neither gives an empty [`Challenge`].
    pub fn parse(header: &str) -> Challenge {
        let mut out = Challenge::default();
        let mut in_bearer = false;
        let mut rest = header.trim();
        while !rest.is_empty() {
            // A token that is not followed by `=` starts a new challenge (its scheme).
            let token_end = rest
                .find(|c: char| c == '=' || c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            let token = &rest[..token_end];
            let after = rest[token_end..].trim_start();
            if let Some(value_text) = after.strip_prefix('=') {
                let (value, remainder) = read_value(value_text.trim_start());
                if in_bearer {
                    let slot = match token.to_ascii_lowercase().as_str() {
                        "resource_metadata" => Some(&mut out.resource_metadata),
                        "scope" => Some(&mut out.scope),
                        "error" => Some(&mut out.error),
                        "error_description" => Some(&mut out.error_description),
                        _ => None,
                    };
                    if let Some(slot) = slot {
                        slot.get_or_insert(value);
                    }
                }
                rest = remainder.trim_start().trim_start_matches(',').trim_start();
            } else {
                if !token.is_empty() {
                    if in_bearer {
                        // The Bearer challenge ended; the first one is the one we read.
                        break;
                    }
                    in_bearer =
                        token.eq_ignore_ascii_case("bearer") || token.eq_ignore_ascii_case("dpop");
                }
                rest = after.trim_start_matches(',').trim_start();
                if token.is_empty() && after.is_empty() {
                    break;
                }
            }
        }
        out
    }

    /// The scopes named by `scope`, in order.
    pub fn scopes(&self) -> Vec<&str> {
        self.scope
            .as_deref()
            .map(|s| s.split_whitespace().collect())
            .unwrap_or_default()
    }
}

/// A quoted string (with `\` escapes) or a bare token; returns it and what follows.
fn read_value(text: &str) -> (String, &str) {
    if let Some(quoted) = text.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                }
                '"' => return (value, &quoted[i + 1..]),
                _ => value.push(c),
            }
        }
        (value, "")
    } else {
        let end = text
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(text.len());
        (text[..end].to_owned(), &text[end..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_and_bare_parameters_are_read() {
        let c = Challenge::parse(
            r#"Bearer resource_metadata="http://x/.well-known/oauth-protected-resource/mcp", scope=mcp:basic"#,
        );
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.scope.as_deref(), Some("mcp:basic"));
        assert_eq!(c.error, None);
    }

    #[test]
    fn escapes_and_commas_inside_quotes_are_kept() {
        let c = Challenge::parse(r#"Bearer error_description="a \"b\", c", error="invalid_token""#);
        assert_eq!(c.error_description.as_deref(), Some(r#"a "b", c"#));
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
    }

    #[test]
    fn only_the_bearer_challenge_counts() {
        let c = Challenge::parse(r#"Basic realm="x", scope="nope", Bearer scope="yes""#);
        assert_eq!(c.scope.as_deref(), Some("yes"));
        let c = Challenge::parse(r#"Bearer scope="first", DPoP scope="second""#);
        assert_eq!(c.scope.as_deref(), Some("first"));
        let c = Challenge::parse(
            r#"Basic realm="x", DPoP error="use_dpop_nonce", resource_metadata="http://x/prm""#,
        );
        assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(c.resource_metadata.as_deref(), Some("http://x/prm"));
        assert_eq!(Challenge::parse("Basic realm=\"x\""), Challenge::default());
        assert_eq!(Challenge::parse(""), Challenge::default());
        assert_eq!(Challenge::parse("Bearer"), Challenge::default());
    }
}
