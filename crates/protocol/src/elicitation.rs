//! Elicitation (schema 2025-11-25, `elicitation/create`): a server asks the user, through the
//! client, with a flat form (form mode) or by sending them to a URL (URL mode).
//!
//! A request without `mode` is form mode:
//!
//! ```
//! use junction_protocol::elicitation::ElicitParams;
//! let p: ElicitParams = serde_json::from_value(serde_json::json!({
//!     "message": "Your name?",
//!     "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
//! })).unwrap();
//! assert!(matches!(p, ElicitParams::Form(_)));
//! ```

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::meta::{Meta, RequestMeta, TaskMetadata};
use crate::{notification, request};

/// The schema of a form: a flat object whose properties are primitive schemas (string,
/// number, integer, boolean, and the single- and multi-select enum forms). Each property is
/// kept verbatim so that every variant, `default`s and unknown keywords survive a round trip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestedSchema {
    /// The dialect, when not the default 2020-12.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The fields.
    pub properties: Map<String, Value>,
    /// The fields that must be filled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

/// Form mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FormParams {
    /// What to tell the user.
    pub message: String,
    /// What to ask for.
    #[serde(rename = "requestedSchema")]
    pub requested_schema: RequestedSchema,
    /// Run as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// URL mode (2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UrlParams {
    /// What to tell the user.
    pub message: String,
    /// An id, opaque to the client, that `notifications/elicitation/complete` refers to.
    #[serde(rename = "elicitationId")]
    pub elicitation_id: String,
    /// Where to send the user.
    pub url: String,
    /// Run as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The params of `elicitation/create`.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitParams {
    /// `mode: "form"`, or no mode.
    Form(FormParams),
    /// `mode: "url"`.
    Url(UrlParams),
}

impl Serialize for ElicitParams {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (mode, body) = match self {
            ElicitParams::Form(p) => ("form", serde_json::to_value(p)),
            ElicitParams::Url(p) => ("url", serde_json::to_value(p)),
        };
        let mut body = body.map_err(serde::ser::Error::custom)?;
        if let Value::Object(map) = &mut body {
            map.insert("mode".to_owned(), Value::String(mode.to_owned()));
        }
        body.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ElicitParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut map = Map::<String, Value>::deserialize(deserializer)?;
        let mode = map.remove("mode");
        let body = Value::Object(map);
        match mode.as_ref().map(|m| m.as_str()) {
            None | Some(Some("form")) => serde_json::from_value(body).map(ElicitParams::Form),
            Some(Some("url")) => serde_json::from_value(body).map(ElicitParams::Url),
            _ => return Err(D::Error::custom("`mode` must be \"form\" or \"url\"")),
        }
        .map_err(D::Error::custom)
    }
}

/// What the user did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted (form) or agreed to open the URL.
    Accept,
    /// Said no.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// The result of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (form mode, accept only): strings, numbers, booleans or lists
    /// of strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The params of `notifications/elicitation/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitationCompleteParams {
    /// The URL elicitation that finished.
    #[serde(rename = "elicitationId")]
    pub elicitation_id: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `error.data` of a -32042 URL-elicitation-required error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UrlElicitationRequiredData {
    /// The URL elicitations that must complete first.
    pub elicitations: Vec<UrlParams>,
}

request!(
    /// `elicitation/create`: server → client (client capability `elicitation`).
    Elicit, "elicitation/create", ElicitParams, ElicitResult
);
notification!(
    /// `notifications/elicitation/complete`: a URL elicitation finished.
    ElicitationComplete, "notifications/elicitation/complete", ElicitationCompleteParams
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn form_with_every_enum_variant_round_trips() {
        let wire = json!({
            "mode": "form",
            "message": "Preferences",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "default": "Ada"},
                    "age": {"type": "integer", "minimum": 0, "default": 30},
                    "ok": {"type": "boolean", "default": true},
                    "color": {"type": "string", "enum": ["red", "green"]},
                    "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}]},
                    "legacy": {"type": "string", "enum": ["a"], "enumNames": ["A"]},
                    "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "minItems": 1},
                    "titled": {"type": "array", "items": {"anyOf": [{"const": "p", "title": "P"}]}, "default": ["p"]}
                },
                "required": ["name"]
            }
        });
        let p: ElicitParams = serde_json::from_value(wire.clone()).unwrap();
        assert!(matches!(&p, ElicitParams::Form(f) if f.requested_schema.properties.len() == 8));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
    }

    #[test]
    fn url_mode_and_bad_modes() {
        let wire = json!({"mode": "url", "message": "Sign in", "elicitationId": "e1", "url": "https://example.org/x"});
        let p: ElicitParams = serde_json::from_value(wire.clone()).unwrap();
        assert!(matches!(&p, ElicitParams::Url(u) if u.elicitation_id == "e1"));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        assert!(
            serde_json::from_value::<ElicitParams>(json!({"mode": "voice", "message": "x"}))
                .is_err()
        );
        assert!(
            serde_json::from_value::<ElicitParams>(json!({"mode": "url", "message": "x"})).is_err()
        );
    }

    #[test]
    fn results() {
        let wire = json!({"action": "accept", "content": {"name": "Ada", "n": 3, "ok": false, "tags": ["x"]}});
        let r: ElicitResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        let r: ElicitResult = serde_json::from_value(json!({"action": "decline"})).unwrap();
        assert_eq!(r.action, ElicitAction::Decline);
    }
}
