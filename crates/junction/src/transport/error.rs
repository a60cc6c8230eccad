//! [`TransportError`]: a failure of the transport itself, worded by what happened.
//!
//! A request can fail two ways: the peer answers it with a JSON-RPC error
//! ([`RequestError::Remote`](crate::error::RequestError::Remote)), or the transport could not
//! carry it: the port was closed, the URL answered an HTML `404` or a `500`, authorization
//! failed, a stream broke, or a stdio server wrote something that is not JSON-RPC. Those
//! reach the requester as [`RequestError::Transport`](crate::error::RequestError::Transport)
//! with this error, which names the URL and the HTTP status (or the offending line), so that
//! nobody reads "the peer answered with an error (code -32603)" about a server that never
//! answered at all.
//!
//! ```
//! use junction::transport::TransportError;
//!
//! let error = TransportError::status("http://127.0.0.1:3000/mcp", 404, Some("text/html"), b"<html>...</html>");
//! assert_eq!(error.to_string(), "http://127.0.0.1:3000/mcp answered HTTP 404 Not Found (an HTML page)");
//! ```

/// The most characters of a peer's text (an error body, a stray stdout line) quoted in an
/// error.
const EXCERPT: usize = 200;

/// Why the transport could not carry a request, or the connection broke.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// No connection could be made (refused, unknown host, TLS failure...).
    #[error("could not connect to {url}: {reason}")]
    Connect {
        /// Where.
        url: String,
        /// The innermost cause, as the operating system or TLS stack words it.
        reason: String,
    },
    /// The server answered an HTTP error status without a JSON-RPC error in the body.
    #[error("{url} answered HTTP {status}{}", summary.as_deref().unwrap_or_default())]
    Status {
        /// Where.
        url: String,
        /// The status code, with its reason phrase (`404 Not Found`).
        status: String,
        /// What the body was: ` (an HTML page)`, or `: ` and an excerpt of its text.
        summary: Option<String>,
    },
    /// The server ended the session (`404` to a request with a session id) and no new one
    /// could be started.
    #[error("{url} ended this session (HTTP 404){}", detail.as_deref().map(|d| format!(": {d}")).unwrap_or_else(|| "; connect again to start a new one".to_owned()))]
    SessionEnded {
        /// Where.
        url: String,
        /// Why a new session could not be started, when one was tried.
        detail: Option<String>,
    },
    /// Authorizing with the server failed (the reason may carry a hint, such as how to log in).
    #[error("could not authorize with {url}: {reason}")]
    Auth {
        /// Where.
        url: String,
        /// What the authorization layer said.
        reason: String,
    },
    /// The answer's event stream ended before the response and could not be resumed; under
    /// revision 2026-07-28 (no resumption) the request may be sent again with a new id.
    #[error("the event stream from {url} ended before the response{}", detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    StreamEnded {
        /// Where.
        url: String,
        /// Why it could not be resumed, when resumption was tried.
        detail: Option<String>,
    },
    /// The exchange failed after it started: a reset connection, an unreadable or
    /// unexpected answer.
    #[error("the exchange with {url} failed: {reason}")]
    Exchange {
        /// Where.
        url: String,
        /// What happened.
        reason: String,
    },
    /// A stdio server wrote a line to stdout that is not a JSON-RPC message (the
    /// specification forbids it); the connection is given up at once.
    #[error("the server wrote to stdout a line that is not JSON-RPC: `{line}`")]
    NotJson {
        /// The line, cut and with control characters escaped.
        line: String,
    },
}

impl TransportError {
    /// An HTTP error status from `url`, with `body` summarised: an HTML page is named as
    /// such, other text quoted (cut, control characters escaped). (With `http-client`.)
    #[cfg(feature = "http-client")]
    pub fn status(
        url: impl Into<String>,
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Self {
        let reason = reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason());
        let status = match reason {
            Some(reason) => format!("{status} {reason}"),
            None => status.to_string(),
        };
        let text = String::from_utf8_lossy(body);
        let html = content_type.is_some_and(|t| t.to_ascii_lowercase().contains("html"))
            || text.trim_start().starts_with('<');
        let summary = if html {
            Some(" (an HTML page)".to_owned())
        } else if text.trim().is_empty() {
            None
        } else {
            Some(format!(": {}", excerpt(&text)))
        };
        TransportError::Status {
            url: url.into(),
            status,
            summary,
        }
    }

    /// A stray stdout line of a stdio server.
    pub fn not_json(line: &[u8]) -> Self {
        TransportError::NotJson {
            line: excerpt(&String::from_utf8_lossy(line)),
        }
    }
}

/// `text` fit for one line of an error: trimmed, control characters escaped, cut to
/// [`EXCERPT`] characters.
pub(crate) fn excerpt(text: &str) -> String {
    let text = text.trim();
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == EXCERPT {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(feature = "http-client")]
    fn a_status_names_the_url_the_code_and_what_the_body_was() {
        let html = TransportError::status("http://h/mcp", 404, Some("text/html"), b"<p>x</p>");
        assert_eq!(
            html.to_string(),
            "http://h/mcp answered HTTP 404 Not Found (an HTML page)"
        );
        let text = TransportError::status("http://h/mcp", 500, None, b"boom\n");
        assert_eq!(
            text.to_string(),
            "http://h/mcp answered HTTP 500 Internal Server Error: boom"
        );
        let empty = TransportError::status("http://h/mcp", 401, None, b"");
        assert_eq!(
            empty.to_string(),
            "http://h/mcp answered HTTP 401 Unauthorized"
        );
    }

    #[test]
    fn quoted_text_is_cut_and_escaped() {
        let long = "x".repeat(500);
        assert_eq!(excerpt(&long).chars().count(), EXCERPT + 1);
        assert_eq!(excerpt("a\u{1b}[31mb\r"), "a\\u{1b}[31mb");
        let junk = TransportError::not_json(b"Server started\x07");
        assert_eq!(
            junk.to_string(),
            r"the server wrote to stdout a line that is not JSON-RPC: `Server started\u{7}`"
        );
    }
}
