//! Who content is for and how it is meant to be used: [`Role`] and [`Annotations`], shared
//! by content blocks ([`crate::content`]) and resources ([`crate::resources`]), which both
//! depend on this module and not on each other's.
//!
//! ```
//! use junction_protocol::annotations::{Annotations, Role};
//! let hints = Annotations::default().audience([Role::User]).priority(0.9);
//! assert_eq!(
//!     serde_json::to_value(&hints).unwrap(),
//!     serde_json::json!({"audience": ["user"], "priority": 0.9})
//! );
//! ```

use serde::{Deserialize, Serialize};

/// Who a piece of content is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person.
    User,
    /// The model.
    Assistant,
}

impl Role {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// Hints about how to use a piece of content.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Who it is meant for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (optional) to 1 (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// When it last changed (ISO 8601).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Annotations {
    /// Sets who it is for.
    pub fn audience(mut self, audience: impl IntoIterator<Item = Role>) -> Self {
        self.audience = Some(audience.into_iter().collect());
        self
    }

    /// Sets the priority (0 to 1).
    pub fn priority(mut self, priority: f64) -> Self {
        self.priority = Some(priority);
        self
    }

    /// Sets when it last changed (ISO 8601).
    pub fn last_modified(mut self, when: impl Into<String>) -> Self {
        self.last_modified = Some(when.into());
        self
    }
}
