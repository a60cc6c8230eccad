//! Argument completion (schema 2025-11-25, `completion/complete`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::meta::{Meta, RequestMeta};
use crate::request;

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

/// The argument being typed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionArgument {
    /// Its name.
    pub name: String,
    /// What has been typed so far.
    pub value: String,
}

/// Arguments already resolved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompletionContext {
    /// Their values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// The params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// The suggestions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    /// At most [`MAX_COMPLETION_VALUES`] values, best first.
    pub values: Vec<String>,
    /// How many matches exist in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether more exist than were sent.
    #[serde(rename = "hasMore", default, skip_serializing_if = "Option::is_none")]
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

/// The result of `completion/complete`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
    /// `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Unknown members, kept.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

request!(
    /// `completion/complete` (server capability `completions`).
    Complete, "completion/complete", CompleteParams, CompleteResult
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
