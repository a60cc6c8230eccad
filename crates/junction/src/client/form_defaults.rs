//! Schema defaults for elicitation forms (SEP-1034, client/elicitation in 2025-11-25): a
//! form field the user left alone takes the `default` its schema names, so that what the
//! client submits is what the user saw pre-filled.
//!
//! ```
//! use std::collections::BTreeMap;
//! use junction::client::fill_defaults;
//! use junction_protocol::elicitation::{ElicitValue, RequestedSchema};
//!
//! let schema: RequestedSchema = serde_json::from_value(serde_json::json!({
//!     "type": "object",
//!     "properties": {
//!         "name": {"type": "string", "default": "John Doe"},
//!         "age": {"type": "integer", "default": 30},
//!         "email": {"type": "string"}
//!     }
//! })).unwrap();
//! let typed = BTreeMap::from([("name".to_owned(), ElicitValue::from("Ada"))]);
//! let content = fill_defaults(&schema, typed);
//! assert_eq!(content["name"], ElicitValue::from("Ada"));
//! assert_eq!(content["age"], ElicitValue::from(30));
//! assert!(!content.contains_key("email"));
//! ```

use std::collections::BTreeMap;

use junction_protocol::elicitation::{ElicitValue, PrimitiveSchemaDefinition, RequestedSchema};

/// `content` with every field it lacks that has a schema default set to that default.
/// Values already present are kept; fields without a default stay absent.
pub fn fill_defaults(
    schema: &RequestedSchema,
    mut content: BTreeMap<String, ElicitValue>,
) -> BTreeMap<String, ElicitValue> {
    for (name, field) in &schema.properties {
        if content.contains_key(name) {
            continue;
        }
        if let Some(value) = default_of(field) {
            content.insert(name.clone(), value);
        }
    }
    content
}

/// The default a field's schema names, as a submitted value.
pub fn default_of(field: &PrimitiveSchemaDefinition) -> Option<ElicitValue> {
    use PrimitiveSchemaDefinition as P;
    match field {
        P::String(s) => s.default.clone().map(ElicitValue::String),
        P::Number(n) => n.default.clone().map(ElicitValue::Number),
        P::Boolean(b) => b.default.map(ElicitValue::Boolean),
        P::UntitledSingleSelect(e) => e.default.clone().map(ElicitValue::String),
        P::TitledSingleSelect(e) => e.default.clone().map(ElicitValue::String),
        P::LegacyTitledEnum(e) => e.default.clone().map(ElicitValue::String),
        P::UntitledMultiSelect(e) => e.default.clone().map(ElicitValue::StringArray),
        P::TitledMultiSelect(e) => e.default.clone().map(ElicitValue::StringArray),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_of_field_takes_its_default_and_typed_values_win() {
        let schema: RequestedSchema = serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["b"]},
                "note": {"type": "string"}
            }
        }))
        .unwrap();
        let typed = BTreeMap::from([("age".to_owned(), ElicitValue::from(41))]);
        let content = fill_defaults(&schema, typed);
        assert_eq!(
            serde_json::to_value(&content).unwrap(),
            json!({"name": "John Doe", "age": 41, "score": 95.5, "status": "active",
                   "verified": true, "tags": ["b"]})
        );
        assert_eq!(schema.check(&content), Ok(()));
    }
}
