//! Elicitation (schema 2025-11-25, `elicitation/create`): a server asks the user, through the
//! client, with a flat form (form mode) or by sending them to a URL (URL mode).
//!
//! A request without `mode` is form mode:
//!
//! ```
//! use junction_protocol::elicitation::{ElicitParams, PrimitiveSchemaDefinition};
//! let p: ElicitParams = serde_json::from_value(serde_json::json!({
//!     "message": "Your name?",
//!     "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
//! })).unwrap();
//! let ElicitParams::Form(form) = p else { panic!("form mode") };
//! assert!(matches!(form.requested_schema.property("name"), Some(PrimitiveSchemaDefinition::String(_))));
//! ```

mod schema;

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{Error as _, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};

pub use schema::{
    BooleanSchema, EnumOption, LegacyTitledEnumSchema, NumberSchema, NumberType,
    PrimitiveSchemaDefinition, StringFormat, StringSchema, TitledEnumItems,
    TitledMultiSelectEnumSchema, TitledSingleSelectEnumSchema, UntitledEnumItems,
    UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema,
};

use crate::error::{ErrorCode, ErrorObject};
use crate::meta::{Meta, RequestMeta, TaskMetadata};
use crate::result_tail::wire_result;
use crate::{notification, request};

fn object_type() -> String {
    "object".to_owned()
}

/// The schema of a form: a flat object of [`PrimitiveSchemaDefinition`]s. The properties keep
/// the order they were sent in, which is the order to show them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RequestedSchema {
    /// The dialect, when not the default 2020-12.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`.
    #[serde(rename = "type", default = "object_type")]
    pub kind: String,
    /// The fields, in order.
    #[serde(with = "ordered_properties")]
    pub properties: Vec<(String, PrimitiveSchemaDefinition)>,
    /// The fields that must be filled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
    /// Unknown keywords, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for RequestedSchema {
    fn default() -> Self {
        RequestedSchema::new()
    }
}

impl RequestedSchema {
    /// An empty form.
    pub fn new() -> Self {
        RequestedSchema {
            schema: None,
            kind: object_type(),
            properties: Vec::new(),
            required: None,
            extra: Map::new(),
        }
    }

    /// Adds an optional field.
    pub fn optional(mut self, name: impl Into<String>, field: PrimitiveSchemaDefinition) -> Self {
        self.properties.push((name.into(), field));
        self
    }

    /// Adds a field that must be filled.
    pub fn required(mut self, name: impl Into<String>, field: PrimitiveSchemaDefinition) -> Self {
        let name = name.into();
        self.required
            .get_or_insert_with(Vec::new)
            .push(name.clone());
        self.properties.push((name, field));
        self
    }

    /// The field called `name`.
    pub fn property(&self, name: &str) -> Option<&PrimitiveSchemaDefinition> {
        self.properties
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| f)
    }

    /// Whether `name` must be filled.
    pub fn is_required(&self, name: &str) -> bool {
        self.required
            .as_ref()
            .is_some_and(|r| r.iter().any(|n| n == name))
    }

    /// Checks submitted content: every required field present, no unknown field, every value
    /// of the right kind. The error names the field.
    pub fn check(&self, content: &BTreeMap<String, ElicitValue>) -> Result<(), String> {
        for name in self.required.iter().flatten() {
            if !content.contains_key(name) {
                return Err(format!("`{name}` is required"));
            }
        }
        for (name, value) in content {
            let field = self
                .property(name)
                .ok_or_else(|| format!("`{name}` is not a field of this form"))?;
            field
                .check(value)
                .map_err(|why| format!("`{name}` {why}"))?;
        }
        Ok(())
    }
}

/// Serde for an object whose key order matters.
mod ordered_properties {
    use super::*;

    pub fn serialize<S: Serializer>(
        props: &[(String, PrimitiveSchemaDefinition)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(props.len()))?;
        for (k, v) in props {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(String, PrimitiveSchemaDefinition)>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<(String, PrimitiveSchemaDefinition)>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of form fields")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, PrimitiveSchemaDefinition>()? {
                    out.push((k, v));
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

/// `mode: "form"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum FormMode {
    /// `"form"`.
    #[default]
    #[serde(rename = "form")]
    Form,
}

/// `mode: "url"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum UrlMode {
    /// `"url"`.
    #[default]
    #[serde(rename = "url")]
    Url,
}

/// Form mode (`ElicitRequestFormParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FormParams {
    /// `mode`: optional for forms; kept as sent (absent from 2025-06-18 peers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What to tell the user.
    pub message: String,
    /// What to ask for.
    pub requested_schema: RequestedSchema,
    /// Run as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl FormParams {
    /// A form without `mode` (understood by every revision with elicitation).
    pub fn new(message: impl Into<String>, requested_schema: RequestedSchema) -> Self {
        FormParams {
            mode: None,
            message: message.into(),
            requested_schema,
            task: None,
            meta: None,
        }
    }
}

/// URL mode (`ElicitRequestURLParams`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UrlParams {
    /// `mode`: always `"url"`.
    pub mode: UrlMode,
    /// What to tell the user.
    pub message: String,
    /// An id, opaque to the client, that `notifications/elicitation/complete` refers to.
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

impl UrlParams {
    /// Sends the user to `url`.
    pub fn new(
        message: impl Into<String>,
        elicitation_id: impl Into<String>,
        url: impl Into<String>,
    ) -> Self {
        UrlParams {
            mode: UrlMode::Url,
            message: message.into(),
            elicitation_id: elicitation_id.into(),
            url: url.into(),
            task: None,
            meta: None,
        }
    }
}

/// The params of `elicitation/create`. Decoded by `mode`: absent or `"form"` is form mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitParams {
    /// `mode: "form"`, or no mode.
    Form(FormParams),
    /// `mode: "url"`.
    Url(UrlParams),
}

impl ElicitParams {
    /// The message to show.
    pub fn message(&self) -> &str {
        match self {
            ElicitParams::Form(f) => &f.message,
            ElicitParams::Url(u) => &u.message,
        }
    }

    /// The `task` member.
    pub fn task(&self) -> Option<&TaskMetadata> {
        match self {
            ElicitParams::Form(f) => f.task.as_ref(),
            ElicitParams::Url(u) => u.task.as_ref(),
        }
    }
}

impl From<FormParams> for ElicitParams {
    fn from(p: FormParams) -> Self {
        ElicitParams::Form(p)
    }
}

impl From<UrlParams> for ElicitParams {
    fn from(p: UrlParams) -> Self {
        ElicitParams::Url(p)
    }
}

impl<'de> Deserialize<'de> for ElicitParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // One pass over the members of both modes, so the form's field order survives.
        #[derive(Deserialize)]
        struct Any {
            #[serde(default)]
            mode: Option<Value>,
            message: String,
            #[serde(rename = "requestedSchema", default)]
            requested_schema: Option<RequestedSchema>,
            #[serde(rename = "elicitationId", default)]
            elicitation_id: Option<String>,
            #[serde(default)]
            url: Option<String>,
            #[serde(default)]
            task: Option<TaskMetadata>,
            #[serde(rename = "_meta", default)]
            meta: Option<RequestMeta>,
        }
        let any = Any::deserialize(deserializer)?;
        let missing = |what| D::Error::custom(format!("missing field `{what}`"));
        match any.mode.as_ref().map(Value::as_str) {
            None | Some(Some("form")) => Ok(ElicitParams::Form(FormParams {
                mode: any.mode.is_some().then_some(FormMode::Form),
                message: any.message,
                requested_schema: any
                    .requested_schema
                    .ok_or_else(|| missing("requestedSchema"))?,
                task: any.task,
                meta: any.meta,
            })),
            Some(Some("url")) => Ok(ElicitParams::Url(UrlParams {
                mode: UrlMode::Url,
                message: any.message,
                elicitation_id: any.elicitation_id.ok_or_else(|| missing("elicitationId"))?,
                url: any.url.ok_or_else(|| missing("url"))?,
                task: any.task,
                meta: any.meta,
            })),
            _ => Err(D::Error::custom("`mode` must be \"form\" or \"url\"")),
        }
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

/// One submitted value: a string, a number, a boolean or a list of strings.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitValue {
    /// Text or a single choice.
    String(String),
    /// A number, in its exact JSON form.
    Number(Number),
    /// A checkbox.
    Boolean(bool),
    /// Several choices.
    StringArray(Vec<String>),
}

impl<'de> Deserialize<'de> for ElicitValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) => Ok(ElicitValue::String(s)),
            Value::Number(n) => Ok(ElicitValue::Number(n)),
            Value::Bool(b) => Ok(ElicitValue::Boolean(b)),
            Value::Array(items) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s),
                    _ => Err(D::Error::custom("a list value may hold only strings")),
                })
                .collect::<Result<_, _>>()
                .map(ElicitValue::StringArray),
            _ => Err(D::Error::custom(
                "an elicitation value must be a string, a number, a boolean or a list of strings",
            )),
        }
    }
}

impl From<&str> for ElicitValue {
    fn from(s: &str) -> Self {
        ElicitValue::String(s.to_owned())
    }
}

impl From<String> for ElicitValue {
    fn from(s: String) -> Self {
        ElicitValue::String(s)
    }
}

impl From<bool> for ElicitValue {
    fn from(b: bool) -> Self {
        ElicitValue::Boolean(b)
    }
}

impl From<i64> for ElicitValue {
    fn from(n: i64) -> Self {
        ElicitValue::Number(n.into())
    }
}

impl From<Vec<String>> for ElicitValue {
    fn from(v: Vec<String>) -> Self {
        ElicitValue::StringArray(v)
    }
}

wire_result! {
    /// The result of `elicitation/create`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct ElicitResult {
        /// What the user did.
        pub action: ElicitAction,
        /// The submitted values (form mode, accept only).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub content: Option<BTreeMap<String, ElicitValue>>,
    }
}

impl ElicitResult {
    fn of(action: ElicitAction, content: Option<BTreeMap<String, ElicitValue>>) -> Self {
        ElicitResult {
            action,
            content,
            meta: None,
            result_type: None,
            extra: Map::new(),
        }
    }

    /// The user submitted `content` (form mode).
    pub fn accept(content: BTreeMap<String, ElicitValue>) -> Self {
        Self::of(ElicitAction::Accept, Some(content))
    }

    /// The user agreed to open the URL (URL mode: no content).
    pub fn accept_url() -> Self {
        Self::of(ElicitAction::Accept, None)
    }

    /// The user said no.
    pub fn decline() -> Self {
        Self::of(ElicitAction::Decline, None)
    }

    /// The user dismissed the request.
    pub fn cancel() -> Self {
        Self::of(ElicitAction::Cancel, None)
    }
}

/// The params of `notifications/elicitation/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ElicitationCompleteParams {
    /// The URL elicitation that finished.
    pub elicitation_id: String,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ElicitationCompleteParams {
    /// Elicitation `id` finished.
    pub fn new(id: impl Into<String>) -> Self {
        ElicitationCompleteParams {
            elicitation_id: id.into(),
            meta: None,
        }
    }
}

/// `error.data` of a -32042 `URL_ELICITATION_REQUIRED` error (`URLElicitationRequiredError`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UrlElicitationRequiredData {
    /// The URL elicitations that must complete first.
    pub elicitations: Vec<UrlParams>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl UrlElicitationRequiredData {
    /// Data listing `elicitations`.
    pub fn new(elicitations: Vec<UrlParams>) -> Self {
        UrlElicitationRequiredData {
            elicitations,
            extra: Map::new(),
        }
    }

    /// The -32042 error carrying this data.
    pub fn into_error(self, message: impl Into<String>) -> ErrorObject {
        let error = ErrorObject::new(ErrorCode::URL_ELICITATION_REQUIRED, message);
        match serde_json::to_value(&self) {
            Ok(data) => error.with_data(data),
            Err(_) => error,
        }
    }

    /// Reads the data of a -32042 error; `None` for other errors or malformed data.
    pub fn from_error(error: &ErrorObject) -> Option<Self> {
        if error.code != ErrorCode::URL_ELICITATION_REQUIRED {
            return None;
        }
        serde_json::from_value(error.data.clone()?).ok()
    }
}

request!(
    /// `elicitation/create`: server → client (client capability `elicitation`).
    Elicit, "elicitation/create", ElicitParams, ElicitResult,
    capability = Elicitation
);
notification!(
    /// `notifications/elicitation/complete`: a URL elicitation finished (client capability
    /// `elicitation.url`).
    ElicitationComplete, "notifications/elicitation/complete", ElicitationCompleteParams
);

#[cfg(test)]
mod tests;
