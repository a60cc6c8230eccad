//! Argument completion (schema 2025-11-25, `completion/complete`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::meta::RequestMeta;
use crate::request;
use crate::result_tail::wire_result;

/// The most values one completion result may carry.
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What is being completed: a prompt's argument or a resource template's variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionRef {
    /// `ref/prompt`.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
        /// Its display name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// `ref/resource`.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The template (or URI).
        uri: String,
    },
}

impl CompletionRef {
    /// `ref/prompt` for prompt `name`.
    pub fn prompt(name: impl Into<String>) -> Self {
        CompletionRef::Prompt {
            name: name.into(),
            title: None,
        }
    }

    /// `ref/resource` for a resource template (or URI).
    pub fn resource(uri: impl Into<String>) -> Self {
        CompletionRef::Resource { uri: uri.into() }
    }
}

/// The argument being typed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionArgument {
    /// Its name.
    pub name: String,
    /// What has been typed so far.
    pub value: String,
}

/// Arguments already resolved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompletionContext {
    /// Their values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// The params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompleteParams {
    /// What is completed.
    #[serde(rename = "ref")]
    pub reference: CompletionRef,
    /// The argument and its partial value.
    pub argument: CompletionArgument,
    /// Other arguments already given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

impl CompleteParams {
    /// Completes argument `name`, typed so far as `value`, of `reference`.
    pub fn new(
        reference: CompletionRef,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        CompleteParams {
            reference,
            argument: CompletionArgument {
                name: name.into(),
                value: value.into(),
            },
            context: None,
            meta: None,
        }
    }

    /// Adds an already resolved argument to `context.arguments`.
    pub fn resolved(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.context
            .get_or_insert_with(Default::default)
            .arguments
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), value.into());
        self
    }
}

/// The suggestions (`completion`): at most 100 values; use [`Completion::from_matches`] to
/// cap a longer list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// At most [`MAX_COMPLETION_VALUES`] (100) values, best first.
    pub values: Vec<String>,
    /// How many matches exist in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more exist than were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// Keeps the first [`MAX_COMPLETION_VALUES`] of `matches` and says how many there were.
    pub fn from_matches(mut matches: Vec<String>) -> Self {
        let total = matches.len();
        matches.truncate(MAX_COMPLETION_VALUES);
        Completion {
            has_more: Some(total > matches.len()),
            total: Some(total as u64),
            values: matches,
        }
    }
}

wire_result! {
    /// The result of `completion/complete`.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct CompleteResult {
        /// The suggestions.
        pub completion: Completion,
    }
}

impl CompleteResult {
    /// A result with these suggestions.
    pub fn new(completion: Completion) -> Self {
        CompleteResult {
            completion,
            ..Default::default()
        }
    }
}

request!(
    /// `completion/complete` (server capability `completions`).
    Complete, "completion/complete", CompleteParams, CompleteResult,
    capability = Completions
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn params_round_trip_for_both_refs() {
        for wire in [
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": "pa"}}),
            json!({"ref": {"type": "ref/resource", "uri": "library://books/{isbn}"}, "argument": {"name": "isbn", "value": "97"}, "context": {"arguments": {"x": "y"}}}),
        ] {
            let p: CompleteParams = serde_json::from_value(wire.clone()).unwrap();
            assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        }
    }

    #[test]
    fn builders_give_the_spec_wire_forms() {
        let p = CompleteParams::new(CompletionRef::prompt("code_review"), "language", "py")
            .resolved("framework", "flask");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"ref": {"type": "ref/prompt", "name": "code_review"}, "argument": {"name": "language", "value": "py"}, "context": {"arguments": {"framework": "flask"}}})
        );
        let titled = json!({"ref": {"type": "ref/prompt", "name": "p", "title": "P"}, "argument": {"name": "a", "value": ""}});
        let back: CompleteParams = serde_json::from_value(titled.clone()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), titled);
        assert_eq!(
            CompletionRef::resource("file:///{path}"),
            CompletionRef::Resource {
                uri: "file:///{path}".into()
            }
        );
        let wire = json!({"completion": {"values": ["python", "pytorch", "pyside"], "total": 10, "hasMore": true}, "resultType": "complete", "vendor": 1});
        let r: CompleteResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(r.completion.values.len(), 3);
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert!(serde_json::from_value::<CompleteParams>(json!({"ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": "a", "value": ""}})).is_err());
    }

    #[test]
    fn results_are_capped_at_one_hundred() {
        let c = Completion::from_matches((0..150).map(|i| i.to_string()).collect());
        assert_eq!(
            (c.values.len(), c.total, c.has_more),
            (100, Some(150), Some(true))
        );
        let c = Completion::from_matches(vec!["a".into()]);
        assert_eq!(
            serde_json::to_value(CompleteResult {
                completion: c,
                ..Default::default()
            })
            .unwrap(),
            json!({"completion": {"values": ["a"], "total": 1, "hasMore": false}})
        );
    }
}
