use super::*;
use serde_json::json;

fn form(p: &ElicitParams) -> &FormParams {
    match p {
        ElicitParams::Form(f) => f,
        ElicitParams::Url(_) => panic!("expected form mode"),
    }
}

#[test]
fn form_with_every_field_kind_round_trips() {
    let wire = json!({
        "mode": "form",
        "message": "Preferences",
        "requestedSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 50, "default": "Ada"},
                "email": {"type": "string", "format": "email", "description": "Your email address"},
                "when": {"type": "string", "format": "time"},
                "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
                "ratio": {"type": "number", "minimum": 0.5, "default": 1.25},
                "ok": {"type": "boolean", "default": true},
                "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
                "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
                "legacy": {"type": "string", "enum": ["a"], "enumNames": ["A"]},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "minItems": 1, "maxItems": 2},
                "titled": {"type": "array", "items": {"anyOf": [{"const": "p", "title": "P"}]}, "default": ["p"]},
                "vendor": {"type": "string", "x-widget": "textarea"}
            },
            "required": ["name"]
        }
    });
    let p: ElicitParams = serde_json::from_value(wire.clone()).unwrap();
    let schema = &form(&p).requested_schema;
    use PrimitiveSchemaDefinition as P;
    let kind = |name| schema.property(name).unwrap();
    assert!(matches!(kind("name"), P::String(s) if s.min_length == Some(1)));
    assert!(matches!(kind("email"), P::String(s) if s.format == Some(StringFormat::Email)));
    assert!(
        matches!(kind("when"), P::String(s) if s.format == Some(StringFormat::Other("time".into())))
    );
    assert!(matches!(kind("age"), P::Number(n) if n.kind == NumberType::Integer));
    assert!(matches!(kind("ratio"), P::Number(n) if n.kind == NumberType::Number));
    assert!(matches!(kind("ok"), P::Boolean(b) if b.default == Some(true)));
    assert!(matches!(kind("color"), P::UntitledSingleSelect(_)));
    assert!(matches!(kind("size"), P::TitledSingleSelect(t) if t.one_of[1].title == "Large"));
    assert!(matches!(kind("legacy"), P::LegacyTitledEnum(_)));
    assert!(matches!(kind("tags"), P::UntitledMultiSelect(m) if m.max_items == Some(2)));
    assert!(matches!(kind("titled"), P::TitledMultiSelect(_)));
    assert!(matches!(kind("vendor"), P::String(s) if s.extra.contains_key("x-widget")));
    assert_eq!(kind("size").allowed_values(), Some(vec!["s", "l"]));
    assert_eq!(kind("name").label(), Some("Name"));
    assert!(schema.is_required("name") && !schema.is_required("age"));
    assert_eq!(serde_json::to_value(&p).unwrap(), wire);
}

#[test]
fn a_form_without_mode_stays_without_mode_and_keeps_field_order() {
    let text = r#"{"message":"m","requestedSchema":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"boolean"}}}}"#;
    let p: ElicitParams = serde_json::from_str(text).unwrap();
    assert_eq!(form(&p).mode, None);
    let names: Vec<&str> = form(&p)
        .requested_schema
        .properties
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["zeta", "alpha"]);
    assert_eq!(serde_json::to_string(&p).unwrap(), text);
}

#[test]
fn builders_give_the_spec_wire_forms() {
    let schema = RequestedSchema::new()
        .required("name", PrimitiveSchemaDefinition::string().title("Name"))
        .optional(
            "seats",
            PrimitiveSchemaDefinition::integer().description("How many"),
        )
        .optional(
            "room",
            PrimitiveSchemaDefinition::titled_single_select([("a", "Room A")]),
        )
        .optional(
            "days",
            PrimitiveSchemaDefinition::multi_select(["mon", "tue"]),
        )
        .optional(
            "extras",
            PrimitiveSchemaDefinition::titled_multi_select([("tv", "Screen")]),
        )
        .optional("color", PrimitiveSchemaDefinition::single_select(["red"]))
        .optional("vip", PrimitiveSchemaDefinition::boolean())
        .optional("budget", PrimitiveSchemaDefinition::number());
    let params = ElicitParams::from(FormParams::new("Book a room", schema));
    assert_eq!(
        serde_json::to_value(&params).unwrap(),
        json!({
            "message": "Book a room",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "title": "Name"},
                    "seats": {"type": "integer", "description": "How many"},
                    "room": {"type": "string", "oneOf": [{"const": "a", "title": "Room A"}]},
                    "days": {"type": "array", "items": {"type": "string", "enum": ["mon", "tue"]}},
                    "extras": {"type": "array", "items": {"anyOf": [{"const": "tv", "title": "Screen"}]}},
                    "color": {"type": "string", "enum": ["red"]},
                    "vip": {"type": "boolean"},
                    "budget": {"type": "number"}
                },
                "required": ["name"]
            }
        })
    );
    assert_eq!(params.message(), "Book a room");
}

#[test]
fn url_mode_and_bad_modes() {
    let wire = json!({"mode": "url", "message": "Sign in", "elicitationId": "e1", "url": "https://example.org/x", "task": {"ttl": 1000}});
    let p: ElicitParams = serde_json::from_value(wire.clone()).unwrap();
    assert!(matches!(&p, ElicitParams::Url(u) if u.elicitation_id == "e1"));
    assert_eq!(p.task().and_then(|t| t.ttl), Some(1000));
    assert_eq!(serde_json::to_value(&p).unwrap(), wire);
    let built = UrlParams::new("Sign in", "e1", "https://example.org/x");
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        json!({"mode": "url", "message": "Sign in", "elicitationId": "e1", "url": "https://example.org/x"})
    );
    for bad in [
        json!({"mode": "voice", "message": "x"}),
        json!({"mode": "url", "message": "x"}),
        json!({"message": "x"}),
        json!({"message": "x", "requestedSchema": {"type": "object", "properties": {"a": {"type": "object"}}}}),
        json!({"message": "x", "requestedSchema": {"type": "object", "properties": {"a": {"title": "no type"}}}}),
    ] {
        assert!(
            serde_json::from_value::<ElicitParams>(bad.clone()).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn results_round_trip_with_every_value_kind() {
    let wire = json!({"action": "accept", "content": {"name": "Ada", "n": 3, "r": 2.5, "ok": false, "tags": ["x"]}, "resultType": "complete", "vendor": 1});
    let r: ElicitResult = serde_json::from_value(wire.clone()).unwrap();
    let content = r.content.as_ref().unwrap();
    assert_eq!(content["n"], ElicitValue::from(3));
    assert_eq!(content["tags"], ElicitValue::from(vec!["x".to_owned()]));
    assert_eq!(r.extra.get("vendor"), Some(&json!(1)));
    assert_eq!(serde_json::to_value(&r).unwrap(), wire);
    assert_eq!(
        serde_json::to_value(ElicitResult::decline()).unwrap(),
        json!({"action": "decline"})
    );
    assert_eq!(
        serde_json::to_value(ElicitResult::cancel()).unwrap(),
        json!({"action": "cancel"})
    );
    assert_eq!(
        serde_json::to_value(ElicitResult::accept_url()).unwrap(),
        json!({"action": "accept"})
    );
    assert!(serde_json::from_value::<ElicitResult>(
        json!({"action": "accept", "content": {"a": {"nested": 1}}})
    )
    .is_err());
    assert!(serde_json::from_value::<ElicitResult>(
        json!({"action": "accept", "content": {"a": [1]}})
    )
    .is_err());
    assert!(serde_json::from_value::<ElicitResult>(json!({"action": "maybe"})).is_err());
}

#[test]
fn submitted_content_is_checked_against_the_form() {
    let schema = RequestedSchema::new()
        .required(
            "name",
            PrimitiveSchemaDefinition::String(StringSchema {
                max_length: Some(3),
                ..Default::default()
            }),
        )
        .optional(
            "n",
            PrimitiveSchemaDefinition::Number(NumberSchema {
                kind: NumberType::Integer,
                minimum: Some(1.into()),
                ..Default::default()
            }),
        )
        .optional("c", PrimitiveSchemaDefinition::single_select(["red"]))
        .optional("m", PrimitiveSchemaDefinition::multi_select(["a", "b"]));
    let content = |pairs: Vec<(&str, ElicitValue)>| -> BTreeMap<String, ElicitValue> {
        pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
    };
    assert!(schema
        .check(&content(vec![
            ("name", "Ada".into()),
            ("n", 2.into()),
            ("c", "red".into()),
            ("m", vec!["a".to_owned()].into()),
        ]))
        .is_ok());
    let err = |pairs| schema.check(&content(pairs)).unwrap_err();
    assert_eq!(err(vec![("n", 2.into())]), "`name` is required");
    assert!(err(vec![("name", "Adaline".into())]).contains("at most 3"));
    assert!(err(vec![("name", "A".into()), ("n", 0.into())]).contains("at least 1"));
    assert!(err(vec![
        ("name", "A".into()),
        ("n", ElicitValue::Number(Number::from_f64(1.5).unwrap()))
    ])
    .contains("whole number"));
    assert!(err(vec![("name", "A".into()), ("c", "blue".into())]).contains("one of: red"));
    assert!(err(vec![
        ("name", "A".into()),
        ("m", vec!["z".to_owned()].into())
    ])
    .contains("\"z\""));
    assert!(err(vec![("name", true.into())]).contains("`name` must be a string"));
    assert!(err(vec![("name", "A".into()), ("other", true.into())]).contains("not a field"));
}

#[test]
fn url_elicitation_required_error_data() {
    let data = UrlElicitationRequiredData::new(vec![UrlParams::new(
        "Authorize access to your files.",
        "550e8400-e29b-41d4-a716-446655440000",
        "https://mcp.example.com/connect?elicitationId=550e8400",
    )]);
    let error = data
        .clone()
        .into_error("This request requires more information.");
    assert_eq!(
        serde_json::to_value(&error).unwrap(),
        json!({
            "code": -32042,
            "message": "This request requires more information.",
            "data": {"elicitations": [{
                "mode": "url",
                "message": "Authorize access to your files.",
                "elicitationId": "550e8400-e29b-41d4-a716-446655440000",
                "url": "https://mcp.example.com/connect?elicitationId=550e8400"
            }]}
        })
    );
    assert_eq!(UrlElicitationRequiredData::from_error(&error), Some(data));
    assert_eq!(
        UrlElicitationRequiredData::from_error(&ErrorObject::internal("x")),
        None
    );
    let done = ElicitationCompleteParams::new("550e8400");
    assert_eq!(
        serde_json::to_value(&done).unwrap(),
        json!({"elicitationId": "550e8400"})
    );
}
