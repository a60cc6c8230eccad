//! The restricted JSON Schema of an elicitation form (schema 2025-11-25,
//! `PrimitiveSchemaDefinition`): one flat object whose properties are strings, numbers,
//! booleans, or single- and multi-select enums.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};

use super::ElicitValue;

/// `format` of a string field: `email`, `uri`, `date`, `date-time`, or another string kept
/// as it came.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StringFormat {
    /// `email`.
    Email,
    /// `uri`.
    Uri,
    /// `date`.
    Date,
    /// `date-time`.
    DateTime,
    /// A format this crate does not know.
    Other(String),
}

impl StringFormat {
    /// The name on the wire.
    pub fn as_str(&self) -> &str {
        match self {
            StringFormat::Email => "email",
            StringFormat::Uri => "uri",
            StringFormat::Date => "date",
            StringFormat::DateTime => "date-time",
            StringFormat::Other(s) => s,
        }
    }
}

impl fmt::Display for StringFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for StringFormat {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StringFormat {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "email" => StringFormat::Email,
            "uri" => StringFormat::Uri,
            "date" => StringFormat::Date,
            "date-time" => StringFormat::DateTime,
            _ => StringFormat::Other(s),
        })
    }
}

/// `StringSchema`: free text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StringSchema {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The fewest characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// The most characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// The format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// The pre-filled value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Unknown keywords, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `number` or `integer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// Any number.
    #[default]
    Number,
    /// Whole numbers only.
    Integer,
}

/// `NumberSchema`: a number or an integer. Bounds and default keep their exact JSON form.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NumberSchema {
    /// `number` or `integer`.
    #[serde(rename = "type")]
    pub kind: NumberType,
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The least value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum: Option<Number>,
    /// The greatest value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maximum: Option<Number>,
    /// The pre-filled value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Number>,
    /// Unknown keywords, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl NumberSchema {
    /// A `number` or `integer` field with no bounds and no default.
    pub fn new(kind: NumberType) -> Self {
        NumberSchema {
            kind,
            ..Self::default()
        }
    }

    /// Sets the least value.
    pub fn minimum(mut self, minimum: impl Into<Number>) -> Self {
        self.minimum = Some(minimum.into());
        self
    }

    /// Sets the greatest value.
    pub fn maximum(mut self, maximum: impl Into<Number>) -> Self {
        self.maximum = Some(maximum.into());
        self
    }

    /// Sets the pre-filled value.
    pub fn default_value(mut self, value: impl Into<Number>) -> Self {
        self.default = Some(value.into());
        self
    }
}

/// `BooleanSchema`: a checkbox.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BooleanSchema {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The pre-filled value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
    /// Unknown keywords, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One choice with a display label: `{const, title}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EnumOption {
    /// The value sent back.
    #[serde(rename = "const")]
    pub value: String,
    /// What the user sees.
    pub title: String,
    /// Unknown keywords, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl EnumOption {
    /// A value and its label.
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        EnumOption {
            value: value.into(),
            title: title.into(),
            extra: Map::new(),
        }
    }
}

/// `UntitledSingleSelectEnumSchema`: one of `enum`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UntitledSingleSelectEnumSchema {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// The pre-selected choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Unknown keywords, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `TitledSingleSelectEnumSchema`: one of `oneOf`, each with a label.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledSingleSelectEnumSchema {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    pub one_of: Vec<EnumOption>,
    /// The pre-selected choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Unknown keywords, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `LegacyTitledEnumSchema` (deprecated): one of `enum`, labelled by the non-standard
/// `enumNames`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LegacyTitledEnumSchema {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Their labels, in the same order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// The pre-selected choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Unknown keywords, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn string_type() -> String {
    "string".to_owned()
}

/// `items` of an untitled multi-select: `{type: "string", enum}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UntitledEnumItems {
    /// Always `"string"`.
    #[serde(rename = "type", default = "string_type")]
    pub kind: String,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Unknown keywords, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `items` of a titled multi-select: `{anyOf: [{const, title}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledEnumItems {
    /// The choices.
    pub any_of: Vec<EnumOption>,
    /// Unknown keywords, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `UntitledMultiSelectEnumSchema`: any of `items.enum`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UntitledMultiSelectEnumSchema {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// The most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: UntitledEnumItems,
    /// The pre-selected choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Unknown keywords, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `TitledMultiSelectEnumSchema`: any of `items.anyOf`, each with a label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledMultiSelectEnumSchema {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// The most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: TitledEnumItems,
    /// The pre-selected choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
    /// Unknown keywords, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One field of a form (`PrimitiveSchemaDefinition`). Told apart by `type` and by which
/// enum keyword is present (`oneOf`, `enum` with or without `enumNames`, `items.anyOf`,
/// `items.enum`).
#[derive(Debug, Clone, PartialEq)]
pub enum PrimitiveSchemaDefinition {
    /// `StringSchema`.
    String(StringSchema),
    /// `NumberSchema` (`number` or `integer`).
    Number(NumberSchema),
    /// `BooleanSchema`.
    Boolean(BooleanSchema),
    /// `UntitledSingleSelectEnumSchema`.
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// `TitledSingleSelectEnumSchema`.
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// `UntitledMultiSelectEnumSchema`.
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// `TitledMultiSelectEnumSchema`.
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// `LegacyTitledEnumSchema` (deprecated).
    LegacyTitledEnum(LegacyTitledEnumSchema),
}

/// A body serialized after its `type`.
#[derive(Serialize)]
struct Typed<'a, T> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    body: &'a T,
}

impl Serialize for PrimitiveSchemaDefinition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use PrimitiveSchemaDefinition as P;
        match self {
            P::Number(n) => n.serialize(s),
            P::String(b) => Typed {
                kind: "string",
                body: b,
            }
            .serialize(s),
            P::Boolean(b) => Typed {
                kind: "boolean",
                body: b,
            }
            .serialize(s),
            P::UntitledSingleSelect(b) => Typed {
                kind: "string",
                body: b,
            }
            .serialize(s),
            P::TitledSingleSelect(b) => Typed {
                kind: "string",
                body: b,
            }
            .serialize(s),
            P::LegacyTitledEnum(b) => Typed {
                kind: "string",
                body: b,
            }
            .serialize(s),
            P::UntitledMultiSelect(b) => Typed {
                kind: "array",
                body: b,
            }
            .serialize(s),
            P::TitledMultiSelect(b) => Typed {
                kind: "array",
                body: b,
            }
            .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use PrimitiveSchemaDefinition as P;
        let mut map = Map::<String, Value>::deserialize(d)?;
        let kind = match map.get("type") {
            Some(Value::String(k)) => k.clone(),
            Some(_) => return Err(D::Error::custom("a form field's `type` must be a string")),
            None => return Err(D::Error::custom("a form field needs a `type`")),
        };
        fn body<T: serde::de::DeserializeOwned, E: serde::de::Error>(
            map: Map<String, Value>,
            what: &str,
        ) -> Result<T, E> {
            serde_json::from_value(Value::Object(map))
                .map_err(|e| E::custom(format!("invalid {what} field: {e}")))
        }
        if kind == "number" || kind == "integer" {
            return body(map, "number").map(P::Number);
        }
        map.remove("type");
        match kind.as_str() {
            "boolean" => body(map, "boolean").map(P::Boolean),
            "string" if map.contains_key("oneOf") => {
                body(map, "titled single-select").map(P::TitledSingleSelect)
            }
            "string" if map.contains_key("enum") && map.contains_key("enumNames") => {
                body(map, "legacy titled enum").map(P::LegacyTitledEnum)
            }
            "string" if map.contains_key("enum") => {
                body(map, "single-select").map(P::UntitledSingleSelect)
            }
            "string" => body(map, "string").map(P::String),
            "array" => {
                let titled = map
                    .get("items")
                    .and_then(|i| i.get("anyOf"))
                    .is_some();
                if titled {
                    body(map, "titled multi-select").map(P::TitledMultiSelect)
                } else {
                    body(map, "multi-select").map(P::UntitledMultiSelect)
                }
            }
            other => Err(D::Error::custom(format!(
                "unsupported form field type {other:?}; use string, number, integer, boolean or array"
            ))),
        }
    }
}

impl PrimitiveSchemaDefinition {
    /// A free-text field.
    pub fn string() -> Self {
        PrimitiveSchemaDefinition::String(StringSchema::default())
    }

    /// A number field.
    pub fn number() -> Self {
        PrimitiveSchemaDefinition::Number(NumberSchema::default())
    }

    /// An integer field.
    pub fn integer() -> Self {
        PrimitiveSchemaDefinition::Number(NumberSchema {
            kind: NumberType::Integer,
            ..Default::default()
        })
    }

    /// A checkbox.
    pub fn boolean() -> Self {
        PrimitiveSchemaDefinition::Boolean(BooleanSchema::default())
    }

    /// One of `values`.
    pub fn single_select<S: Into<String>>(values: impl IntoIterator<Item = S>) -> Self {
        PrimitiveSchemaDefinition::UntitledSingleSelect(UntitledSingleSelectEnumSchema {
            values: values.into_iter().map(Into::into).collect(),
            ..Default::default()
        })
    }

    /// One of `(value, label)` choices.
    pub fn titled_single_select<V: Into<String>, T: Into<String>>(
        options: impl IntoIterator<Item = (V, T)>,
    ) -> Self {
        PrimitiveSchemaDefinition::TitledSingleSelect(TitledSingleSelectEnumSchema {
            one_of: options
                .into_iter()
                .map(|(v, t)| EnumOption::new(v, t))
                .collect(),
            ..Default::default()
        })
    }

    /// Any of `values`.
    pub fn multi_select<S: Into<String>>(values: impl IntoIterator<Item = S>) -> Self {
        PrimitiveSchemaDefinition::UntitledMultiSelect(UntitledMultiSelectEnumSchema {
            title: None,
            description: None,
            min_items: None,
            max_items: None,
            items: UntitledEnumItems {
                kind: string_type(),
                values: values.into_iter().map(Into::into).collect(),
                extra: Map::new(),
            },
            default: None,
            extra: Map::new(),
        })
    }

    /// Any of `(value, label)` choices.
    pub fn titled_multi_select<V: Into<String>, T: Into<String>>(
        options: impl IntoIterator<Item = (V, T)>,
    ) -> Self {
        PrimitiveSchemaDefinition::TitledMultiSelect(TitledMultiSelectEnumSchema {
            title: None,
            description: None,
            min_items: None,
            max_items: None,
            items: TitledEnumItems {
                any_of: options
                    .into_iter()
                    .map(|(v, t)| EnumOption::new(v, t))
                    .collect(),
                extra: Map::new(),
            },
            default: None,
            extra: Map::new(),
        })
    }

    fn labels_mut(&mut self) -> (&mut Option<String>, &mut Option<String>) {
        use PrimitiveSchemaDefinition as P;
        match self {
            P::String(b) => (&mut b.title, &mut b.description),
            P::Number(b) => (&mut b.title, &mut b.description),
            P::Boolean(b) => (&mut b.title, &mut b.description),
            P::UntitledSingleSelect(b) => (&mut b.title, &mut b.description),
            P::TitledSingleSelect(b) => (&mut b.title, &mut b.description),
            P::UntitledMultiSelect(b) => (&mut b.title, &mut b.description),
            P::TitledMultiSelect(b) => (&mut b.title, &mut b.description),
            P::LegacyTitledEnum(b) => (&mut b.title, &mut b.description),
        }
    }

    /// Sets the label.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        *self.labels_mut().0 = Some(title.into());
        self
    }

    /// Sets the help text.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        *self.labels_mut().1 = Some(description.into());
        self
    }

    /// The label.
    pub fn label(&self) -> Option<&str> {
        use PrimitiveSchemaDefinition as P;
        match self {
            P::String(b) => b.title.as_deref(),
            P::Number(b) => b.title.as_deref(),
            P::Boolean(b) => b.title.as_deref(),
            P::UntitledSingleSelect(b) => b.title.as_deref(),
            P::TitledSingleSelect(b) => b.title.as_deref(),
            P::UntitledMultiSelect(b) => b.title.as_deref(),
            P::TitledMultiSelect(b) => b.title.as_deref(),
            P::LegacyTitledEnum(b) => b.title.as_deref(),
        }
    }

    /// The values a select field allows (`None` for free fields).
    pub fn allowed_values(&self) -> Option<Vec<&str>> {
        use PrimitiveSchemaDefinition as P;
        fn strs(v: &[String]) -> Vec<&str> {
            v.iter().map(String::as_str).collect()
        }
        fn opts(o: &[EnumOption]) -> Vec<&str> {
            o.iter().map(|o| o.value.as_str()).collect()
        }
        match self {
            P::UntitledSingleSelect(b) => Some(strs(&b.values)),
            P::LegacyTitledEnum(b) => Some(strs(&b.values)),
            P::UntitledMultiSelect(b) => Some(strs(&b.items.values)),
            P::TitledSingleSelect(b) => Some(opts(&b.one_of)),
            P::TitledMultiSelect(b) => Some(opts(&b.items.any_of)),
            P::String(_) | P::Number(_) | P::Boolean(_) => None,
        }
    }

    /// Checks a submitted value against this field; the error is a sentence for the user.
    pub fn check(&self, value: &ElicitValue) -> Result<(), String> {
        use PrimitiveSchemaDefinition as P;
        match (self, value) {
            (P::String(s), ElicitValue::String(v)) => {
                let n = v.chars().count() as u64;
                match (s.min_length, s.max_length) {
                    (Some(min), _) if n < min => {
                        Err(format!("must have at least {min} characters"))
                    }
                    (_, Some(max)) if n > max => Err(format!("must have at most {max} characters")),
                    _ => Ok(()),
                }
            }
            (P::Number(s), ElicitValue::Number(v)) => {
                if s.kind == NumberType::Integer && !(v.is_i64() || v.is_u64()) {
                    return Err("must be a whole number".to_owned());
                }
                let x = v.as_f64().unwrap_or(f64::NAN);
                if let Some(min) = s.minimum.as_ref().and_then(Number::as_f64) {
                    if x < min {
                        return Err(format!("must be at least {min}"));
                    }
                }
                if let Some(max) = s.maximum.as_ref().and_then(Number::as_f64) {
                    if x > max {
                        return Err(format!("must be at most {max}"));
                    }
                }
                Ok(())
            }
            (P::Boolean(_), ElicitValue::Boolean(_)) => Ok(()),
            (
                P::UntitledSingleSelect(_) | P::TitledSingleSelect(_) | P::LegacyTitledEnum(_),
                ElicitValue::String(v),
            ) => {
                let allowed = self.allowed_values().unwrap_or_default();
                if allowed.contains(&v.as_str()) {
                    Ok(())
                } else {
                    Err(format!("must be one of: {}", allowed.join(", ")))
                }
            }
            (P::UntitledMultiSelect(_) | P::TitledMultiSelect(_), ElicitValue::StringArray(vs)) => {
                let (min, max) = match self {
                    P::UntitledMultiSelect(b) => (b.min_items, b.max_items),
                    P::TitledMultiSelect(b) => (b.min_items, b.max_items),
                    _ => (None, None),
                };
                let allowed = self.allowed_values().unwrap_or_default();
                if let Some(bad) = vs.iter().find(|v| !allowed.contains(&v.as_str())) {
                    return Err(format!(
                        "{bad:?} is not a choice; choose from: {}",
                        allowed.join(", ")
                    ));
                }
                let n = vs.len() as u64;
                match (min, max) {
                    (Some(min), _) if n < min => Err(format!("choose at least {min}")),
                    (_, Some(max)) if n > max => Err(format!("choose at most {max}")),
                    _ => Ok(()),
                }
            }
            (
                P::String(_)
                | P::UntitledSingleSelect(_)
                | P::TitledSingleSelect(_)
                | P::LegacyTitledEnum(_),
                _,
            ) => Err("must be a string".to_owned()),
            (P::Number(_), _) => Err("must be a number".to_owned()),
            (P::Boolean(_), _) => Err("must be true or false".to_owned()),
            (P::UntitledMultiSelect(_) | P::TitledMultiSelect(_), _) => {
                Err("must be a list of choices".to_owned())
            }
        }
    }
}
