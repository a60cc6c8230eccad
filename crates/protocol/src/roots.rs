//! Roots (schema 2025-11-25): the `file://` boundaries a client tells a server about.

use serde::{Deserialize, Serialize};

use crate::meta::{EmptyParams, Meta, NotificationParams};
use crate::result_tail::wire_result;
use crate::{notification, request};

/// One root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Root {
    /// A root at `uri` (a `file://` URI).
    pub fn new(uri: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            name: None,
            meta: None,
        }
    }

    /// Sets the display name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

wire_result! {
    /// The result of `roots/list`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct ListRootsResult {
        /// The roots.
        pub roots: Vec<Root>,
    }
}

impl ListRootsResult {
    /// A result with these roots.
    pub fn new(roots: Vec<Root>) -> Self {
        ListRootsResult {
            roots,
            ..Default::default()
        }
    }
}

request!(
    /// `roots/list`: server → client (client capability `roots`).
    ListRoots, "roots/list", EmptyParams, ListRootsResult,
    capability = Roots
);
notification!(
    /// `notifications/roots/list_changed`: client → server.
    RootsListChanged, "notifications/roots/list_changed", NotificationParams,
    families = Handshake, capability = Roots
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn roots_round_trip() {
        let wire = json!({"roots": [{"uri": "file:///home/a/project", "name": "project"}, {"uri": "file:///tmp"}]});
        let r: ListRootsResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        let built = ListRootsResult::new(vec![
            Root::new("file:///home/a/project").name("project"),
            Root::new("file:///tmp"),
        ]);
        assert_eq!(built, r);
        let open = json!({"roots": [{"uri": "file:///x", "_meta": {"k": 1}}], "_meta": {"m": 2}, "vendor": "v"});
        let r: ListRootsResult = serde_json::from_value(open.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), open);
    }
}
