//! `Mcp-Param-{Name}` headers (revision 2026-07-28, SEP-2243): tool arguments a server asks,
//! with an `x-mcp-header` annotation on a property of the tool's input schema, to see
//! mirrored into HTTP headers, so that intermediaries can route on them without reading the
//! body.
//!
//! Both sides use this module: the client reads a tool's annotations ([`annotations`],
//! refusing a tool whose annotations break the rules) and writes each argument's header
//! ([`encode`]); the server reads them back ([`decode`]) and checks every one against the
//! body ([`check`]). A value that is not plain visible ASCII, has a leading or trailing
//! space, or looks like the sentinel travels Base64-encoded as `=?base64?…?=`.
//!
//! ```
//! use junction::transport::http::param;
//! use serde_json::json;
//!
//! let schema = json!({"type": "object", "properties": {
//!     "region": {"type": "string", "x-mcp-header": "Region"},
//!     "query": {"type": "string"}}});
//! let annotated = param::annotations(schema.as_object().unwrap()).unwrap();
//! assert_eq!(annotated[0].header, "Region");
//! assert_eq!(param::encode(&json!("us-west1")).as_deref(), Some("us-west1"));
//! assert_eq!(param::encode(&json!(" padded ")).as_deref(), Some("=?base64?IHBhZGRlZCA=?="));
//! assert_eq!(param::decode("=?base64?IHBhZGRlZCA=?=").unwrap(), " padded ");
//! ```

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{Map, Value};

/// The prefix of every such header.
pub const PREFIX: &str = "mcp-param-";

/// The member of a property schema that names its header.
pub const ANNOTATION: &str = "x-mcp-header";

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// The largest integer JavaScript represents exactly (2^53 - 1).
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// One annotated property of a tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotated {
    /// The chain of `properties` keys from the schema root to the property.
    pub path: Vec<String>,
    /// The `{Name}` of `Mcp-Param-{Name}`, as the schema writes it.
    pub header: String,
}

impl Annotated {
    /// The value at this property's path in `arguments`, when there is one (`null` counts as
    /// none: its header is omitted).
    pub fn value<'a>(&self, arguments: &'a Map<String, Value>) -> Option<&'a Value> {
        let (last, parents) = self.path.split_last()?;
        let mut object = arguments;
        for key in parents {
            object = object.get(key)?.as_object()?;
        }
        object.get(last).filter(|v| !v.is_null())
    }
}

/// Why a tool's annotations are invalid: the client must not offer the tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidAnnotation {
    /// `x-mcp-header` is not a non-empty token of visible ASCII.
    #[error("`x-mcp-header` {0:?} of `{1}` is not a valid header name (it must be a non-empty token of letters, digits and !#$%&'*+-.^_`|~)")]
    Name(String, String),
    /// Two annotations name the same header, ignoring case.
    #[error("`x-mcp-header` {0:?} is used twice (names are compared ignoring case)")]
    Duplicate(String),
    /// The annotated property is not a string, integer or boolean.
    #[error("`x-mcp-header` on `{0}` whose type is not string, integer or boolean")]
    Type(String),
    /// The annotation is not reachable from the root through `properties` alone.
    #[error(
        "`x-mcp-header` at `{0}` is not reachable from the schema root through `properties` alone"
    )]
    Unreachable(String),
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Every annotated property of `schema`, checked against the rules of the revision.
pub fn annotations(schema: &Map<String, Value>) -> Result<Vec<Annotated>, InvalidAnnotation> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for a in &found {
        let lower = a.header.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(InvalidAnnotation::Duplicate(a.header.clone()));
        }
        seen.push(lower);
    }
    Ok(found)
}

/// Visits `schema`; `reachable` says whether it was reached through `properties` only.
fn walk(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut Vec<Annotated>,
) -> Result<(), InvalidAnnotation> {
    let here = || path.join(".");
    if let Some(name) = schema.get(ANNOTATION) {
        if !reachable || path.is_empty() {
            return Err(InvalidAnnotation::Unreachable(here()));
        }
        let name = name.as_str().unwrap_or_default();
        if name.is_empty() || !name.chars().all(is_tchar) {
            return Err(InvalidAnnotation::Name(name.to_owned(), here()));
        }
        let primitive = matches!(
            schema.get("type").and_then(Value::as_str),
            Some("string" | "integer" | "boolean")
        );
        if !primitive {
            return Err(InvalidAnnotation::Type(here()));
        }
        found.push(Annotated {
            path: path.clone(),
            header: name.to_owned(),
        });
    }
    for (key, value) in schema {
        if key == "properties" {
            if let Some(properties) = value.as_object() {
                for (name, property) in properties {
                    if let Some(property) = property.as_object() {
                        path.push(name.clone());
                        walk(property, path, reachable, found)?;
                        path.pop();
                    }
                }
            }
            continue;
        }
        // Any other keyword (items, allOf, $defs, if, ...) leaves the static chain.
        nested(value, path, found)?;
    }
    Ok(())
}

fn nested(
    value: &Value,
    path: &mut Vec<String>,
    found: &mut Vec<Annotated>,
) -> Result<(), InvalidAnnotation> {
    match value {
        Value::Object(map) => walk(map, path, false, found),
        Value::Array(items) => items.iter().try_for_each(|v| nested(v, path, found)),
        _ => Ok(()),
    }
}

/// The text of an argument as its header carries it: strings as they are, integers in
/// decimal, booleans as `true` / `false`; `None` for anything else (no header).
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => {
            let i = n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))?;
            (i.abs() <= MAX_SAFE_INTEGER).then(|| i.to_string())
        }
        _ => None,
    }
}

/// Whether `s` can travel as a plain header value.
fn plain(s: &str) -> bool {
    // Tabs are legal in a header but are control characters: they travel encoded.
    let safe = s.chars().all(|c| c == ' ' || c.is_ascii_graphic());
    let padded = s.starts_with(' ') || s.ends_with(' ');
    let sentinel = s.starts_with(SENTINEL_START) && s.ends_with(SENTINEL_END);
    safe && !padded && !sentinel && !s.is_empty()
}

/// The header value for an argument (`None`: no header for it).
pub fn encode(value: &Value) -> Option<String> {
    let text = text(value)?;
    if plain(&text) {
        return Some(text);
    }
    Some(format!(
        "{SENTINEL_START}{}{SENTINEL_END}",
        STANDARD.encode(text.as_bytes())
    ))
}

/// A header value that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadValue {
    /// The Base64 between the sentinels is malformed (bad alphabet or padding).
    #[error("its Base64 value is malformed")]
    Base64,
    /// The decoded bytes are not UTF-8.
    #[error("its decoded value is not UTF-8")]
    Utf8,
    /// The raw value holds characters a header may not.
    #[error("it holds characters a header value may not")]
    Characters,
}

/// The value a header carries: decoded when it is wrapped in the Base64 sentinel, else
/// taken literally.
pub fn decode(header: &str) -> Result<String, BadValue> {
    if !header
        .chars()
        .all(|c| c == ' ' || c == '\t' || c.is_ascii_graphic())
    {
        return Err(BadValue::Characters);
    }
    let Some(inner) = header
        .strip_prefix(SENTINEL_START)
        .and_then(|rest| rest.strip_suffix(SENTINEL_END))
    else {
        return Ok(header.to_owned());
    };
    let bytes = STANDARD.decode(inner).map_err(|_| BadValue::Base64)?;
    String::from_utf8(bytes).map_err(|_| BadValue::Utf8)
}

/// Whether a decoded header value stands for the body's `value` (integers compared as
/// numbers, so `42.0` matches `42`).
fn matches(header: &str, value: &Value) -> bool {
    match value {
        Value::Number(_) => {
            let body = value.as_f64();
            header.trim().parse::<f64>().ok() == body && body.is_some()
        }
        other => text(other).as_deref() == Some(header),
    }
}

/// Checks the `Mcp-Param-*` headers of a `tools/call` (`headers`: each header's name
/// without the prefix, lowercase, and its raw value) against its arguments and the tool's
/// input schema. The error is the sentence of a `HeaderMismatch` (-32020).
pub fn check(
    schema: &Map<String, Value>,
    arguments: &Map<String, Value>,
    headers: &[(String, String)],
) -> Result<(), String> {
    let Ok(annotated) = annotations(schema) else {
        // A server that lists an invalid annotation has no header to expect.
        return Ok(());
    };
    for a in annotated {
        let lower = a.header.to_ascii_lowercase();
        let header = headers.iter().find(|(n, _)| *n == lower).map(|(_, v)| v);
        match (a.value(arguments), header) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(format!(
                    "Header mismatch: the Mcp-Param-{} header is required when `{}` is in the arguments",
                    a.header,
                    a.path.join(".")
                ))
            }
            (None, Some(_)) => {
                return Err(format!(
                    "Header mismatch: Mcp-Param-{} is sent but `{}` is not in the arguments",
                    a.header,
                    a.path.join(".")
                ))
            }
            (Some(value), Some(raw)) => {
                let decoded = decode(raw).map_err(|e| {
                    format!("Header mismatch: Mcp-Param-{} is invalid: {e}", a.header)
                })?;
                if !matches(&decoded, value) {
                    return Err(format!(
                        "Header mismatch: Mcp-Param-{} header value {decoded:?} does not match body value {value}",
                        a.header
                    ));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn the_revisions_encoding_examples() {
        assert_eq!(encode(&json!("us-west1")).unwrap(), "us-west1");
        assert_eq!(
            encode(&json!("Hello, 世界")).unwrap(),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(
            encode(&json!(" padded ")).unwrap(),
            "=?base64?IHBhZGRlZCA=?="
        );
        assert_eq!(
            encode(&json!("line1\nline2")).unwrap(),
            "=?base64?bGluZTEKbGluZTI=?="
        );
        assert_eq!(
            encode(&json!("=?base64?literal?=")).unwrap(),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(encode(&json!(42)).unwrap(), "42");
        assert_eq!(encode(&json!(true)).unwrap(), "true");
        assert_eq!(encode(&json!(null)), None);
        assert_eq!(encode(&json!([1])), None);
    }

    #[test]
    fn decoding_is_literal_without_both_sentinels_and_strict_with_them() {
        assert_eq!(decode("=?base64?SGVsbG8=?=").unwrap(), "Hello");
        assert_eq!(decode("SGVsbG8=").unwrap(), "SGVsbG8=");
        assert_eq!(decode("=?base64?SGVsbG8=").unwrap(), "=?base64?SGVsbG8=");
        assert_eq!(decode("=?base64?SGVsbG8?="), Err(BadValue::Base64));
        assert_eq!(decode("=?base64?SGVs!!!bG8=?="), Err(BadValue::Base64));
        assert_eq!(decode("a\u{7f}b"), Err(BadValue::Characters));
    }

    #[test]
    fn invalid_annotations_are_named() {
        let bad = [
            json!({"properties": {"v": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "My Region"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Région"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Region:1"}}}),
            json!({"properties": {"v": {"type": "number", "x-mcp-header": "Score"}}}),
            json!({"properties": {"v": {"type": "object", "x-mcp-header": "Data"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "MyField"},
                                  "b": {"type": "string", "x-mcp-header": "myfield"}}}),
            json!({"properties": {"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}),
            json!({"allOf": [{"properties": {"v": {"type": "string", "x-mcp-header": "V"}}}]}),
        ];
        for s in bad {
            assert!(annotations(&schema(s.clone())).is_err(), "{s}");
        }
        let nested = json!({"properties": {"outer": {"type": "object", "properties": {
            "inner": {"type": "integer", "x-mcp-header": "Inner"}}}}});
        let found = annotations(&schema(nested)).unwrap();
        assert_eq!(found[0].path, ["outer", "inner"]);
    }

    #[test]
    fn headers_are_checked_against_the_body() {
        let s = schema(json!({"properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"}}}));
        let args = schema(json!({"region": "Hello", "n": 42}));
        let h = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert!(check(
            &s,
            &args,
            &h(&[("region", "=?base64?SGVsbG8=?="), ("n", "42.0")])
        )
        .is_ok());
        let missing = check(&s, &args, &h(&[("n", "42")])).unwrap_err();
        assert!(
            missing.contains("Mcp-Param-Region header is required"),
            "{missing}"
        );
        assert!(check(&s, &args, &h(&[("region", "Other"), ("n", "42")])).is_err());
        assert!(check(
            &s,
            &args,
            &h(&[("region", "=?base64?SGVsbG8?="), ("n", "42")])
        )
        .is_err());
        assert!(check(&s, &schema(json!({})), &h(&[])).is_ok());
    }
}
