//! JSON Schema for tools: derive a tool's input schema from its argument type, and validate
//! arguments against it with messages that name the field and say how to fix it.

use jsonschema::error::ValidationErrorKind;
use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::{Map, Value};

/// A schema and its validator. A schema derived from a type is compiled when it first
/// checks something (a server with many tools starts without compiling them all); one given
/// as JSON is compiled at once, so that a mistake in it is reported where it is given.
pub struct CompiledSchema {
    schema: Map<String, Value>,
    validator: OnceLock<Result<Validator, String>>,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSchema")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// A schema that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("invalid JSON Schema: {0}")]
pub struct SchemaError(pub String);

impl CompiledSchema {
    /// The JSON Schema (2020-12) of `T`, compiled on first use. The root must be an object
    /// schema.
    pub fn of<T: schemars::JsonSchema>() -> Result<Self, SchemaError> {
        let value = schemars::schema_for!(T).to_value();
        let Value::Object(schema) = value else {
            return Err(SchemaError(
                "the derived schema is not an object".to_owned(),
            ));
        };
        object_root(&schema)?;
        Ok(CompiledSchema {
            schema,
            validator: OnceLock::new(),
        })
    }

    /// Compiles a schema given as JSON.
    pub fn new(schema: Map<String, Value>) -> Result<Self, SchemaError> {
        object_root(&schema)?;
        let validator = compile(&schema).map_err(SchemaError)?;
        Ok(CompiledSchema {
            schema,
            validator: OnceLock::from(Ok(validator)),
        })
    }

    /// The schema as JSON.
    pub fn schema(&self) -> &Map<String, Value> {
        &self.schema
    }

    /// Checks tool arguments; on failure, one sentence per problem, naming the field and
    /// telling the caller (often a model) how to call again.
    pub fn check(&self, instance: &Value) -> Result<(), Vec<String>> {
        self.problems(instance, describe_argument)
    }

    /// Checks a value the other side produced (a tool's `structuredContent`, for instance);
    /// on failure, one sentence per problem, naming the member.
    pub fn check_value(&self, instance: &Value) -> Result<(), Vec<String>> {
        self.problems(instance, describe_value)
    }

    fn problems(
        &self,
        instance: &Value,
        describe: fn(&jsonschema::ValidationError<'_>) -> String,
    ) -> Result<(), Vec<String>> {
        let validator = match self.validator.get_or_init(|| compile(&self.schema)) {
            Ok(validator) => validator,
            Err(e) => return Err(vec![format!("the schema cannot be compiled: {e}")]),
        };
        // Valid arguments are the common case; `is_valid` stops at the first failure and
        // builds no error values, so only invalid input pays for the messages.
        if validator.is_valid(instance) {
            return Ok(());
        }
        let problems: Vec<String> = validator
            .iter_errors(instance)
            .map(|e| describe(&e))
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

/// A tool schema's root must be an object schema: arguments are always an object.
fn object_root(schema: &Map<String, Value>) -> Result<(), SchemaError> {
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        Ok(())
    } else {
        Err(SchemaError(
            "a tool schema must have `\"type\": \"object\"` at its root".to_owned(),
        ))
    }
}

fn compile(schema: &Map<String, Value>) -> Result<Validator, String> {
    jsonschema::validator_for(&Value::Object(schema.clone())).map_err(|e| e.to_string())
}

/// What one validation error is about: the dotted path of the member, a missing member's
/// name, or unexpected members.
enum Problem {
    Missing(String),
    Unexpected(String),
    Invalid(String),
}

fn classify(error: &jsonschema::ValidationError<'_>) -> Problem {
    let path = error.instance_path().to_string();
    let field = path.trim_start_matches('/').replace('/', ".");
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| property.to_string());
            Problem::Missing(if field.is_empty() {
                name
            } else {
                format!("{field}.{name}")
            })
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => Problem::Unexpected(
            unexpected
                .iter()
                .map(|u| format!("`{u}`"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        _ => Problem::Invalid(field),
    }
}

fn describe_argument(error: &jsonschema::ValidationError<'_>) -> String {
    match classify(error) {
        Problem::Missing(name) => {
            format!("missing required argument `{name}`: add it and call again")
        }
        Problem::Unexpected(names) => {
            format!("unknown argument(s) {names}: remove them and call again")
        }
        Problem::Invalid(field) if field.is_empty() => {
            format!("the arguments are invalid: {error}")
        }
        Problem::Invalid(field) => {
            format!("argument `{field}` is invalid: {error}; correct it and call again")
        }
    }
}

fn describe_value(error: &jsonschema::ValidationError<'_>) -> String {
    match classify(error) {
        Problem::Missing(name) => format!("required member `{name}` is missing"),
        Problem::Unexpected(names) => format!("unexpected member(s) {names}"),
        Problem::Invalid(field) if field.is_empty() => format!("the value is invalid: {error}"),
        Problem::Invalid(field) => format!("member `{field}` is invalid: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    struct Args {
        /// A number.
        a: f64,
        b: f64,
        #[serde(default)]
        label: Option<String>,
    }

    #[test]
    fn derived_schema_is_2020_12_and_validates() {
        let s = CompiledSchema::of::<Args>().unwrap();
        assert_eq!(
            s.schema()["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(s.schema()["type"], "object");
        assert!(s.check(&json!({"a": 1, "b": 2})).is_ok());
        let missing = s.check(&json!({"a": 1})).unwrap_err();
        assert_eq!(
            missing,
            vec!["missing required argument `b`: add it and call again"]
        );
        let wrong = s.check(&json!({"a": "x", "b": 2})).unwrap_err();
        assert!(
            wrong[0].starts_with("argument `a` is invalid") && wrong[0].contains("number"),
            "{wrong:?}"
        );
    }

    #[test]
    fn values_are_described_as_members_not_arguments() {
        let s = CompiledSchema::of::<Args>().unwrap();
        assert_eq!(
            s.check_value(&json!({"a": 1})).unwrap_err(),
            vec!["required member `b` is missing"]
        );
        let wrong = s.check_value(&json!({"a": "x", "b": 2})).unwrap_err();
        assert!(
            wrong[0].starts_with("member `a` is invalid") && !wrong[0].contains("call again"),
            "{wrong:?}"
        );
    }

    #[test]
    fn non_object_roots_are_refused() {
        let mut m = Map::new();
        m.insert("type".into(), json!("string"));
        assert!(CompiledSchema::new(m).is_err());
    }
}
