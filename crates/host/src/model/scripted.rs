//! A model that plays a script: for demos and tests without a provider.
//!
//! A script is JSON, a list of turns (or `{"turns": [...]}`); each turn has optional `text`
//! and optional `toolCalls` (`name` is the model name, `arguments` an object, `id` optional):
//!
//! ```json
//! [ {"toolCalls": [{"name": "library__search", "arguments": {"query": "dune"}}]},
//!   {"text": "I found it."} ]
//! ```

use std::sync::Mutex;

use junction::session::BoxFuture;
use serde::Deserialize;
use serde_json::Value;

use super::{Model, ModelError, ModelReply, ModelTool};
use crate::conversation::{Conversation, ToolCall};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptedCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Turn {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ScriptedCall>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Script {
    Turns(Vec<Turn>),
    Object { turns: Vec<Turn> },
}

/// Plays turns in order; each `respond` takes the next one.
#[derive(Debug)]
pub struct ScriptedModel {
    turns: Vec<Turn>,
    next: Mutex<usize>,
}

impl ScriptedModel {
    /// Reads a script from JSON.
    pub fn from_json(text: &str) -> Result<Self, ModelError> {
        let script: Script = serde_json::from_str(text).map_err(|e| ModelError::Script {
            reason: e.to_string(),
        })?;
        let turns = match script {
            Script::Turns(turns) | Script::Object { turns } => turns,
        };
        for (i, turn) in turns.iter().enumerate() {
            if turn.text.is_none() && turn.tool_calls.is_empty() {
                return Err(ModelError::Script {
                    reason: format!("turn {i} has neither `text` nor `toolCalls`"),
                });
            }
        }
        Ok(ScriptedModel {
            turns,
            next: Mutex::new(0),
        })
    }

    /// A script of replies built in code.
    pub fn new(replies: impl IntoIterator<Item = ModelReply>) -> Self {
        let turns = replies
            .into_iter()
            .map(|r| Turn {
                text: r.text,
                tool_calls: r
                    .tool_calls
                    .into_iter()
                    .map(|c| ScriptedCall {
                        id: Some(c.id),
                        name: c.name,
                        arguments: Some(c.arguments),
                    })
                    .collect(),
            })
            .collect();
        ScriptedModel {
            turns,
            next: Mutex::new(0),
        }
    }

    /// How many turns have been played.
    pub fn played(&self) -> usize {
        self.next.lock().map(|n| *n).unwrap_or(0)
    }
}

impl Model for ScriptedModel {
    fn respond<'a>(
        &'a self,
        _conversation: &'a Conversation,
        _tools: &'a [ModelTool],
    ) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        let reply = (|| {
            let mut next = self.next.lock().map_err(|_| ModelError::Script {
                reason: "the script's position was lost".to_owned(),
            })?;
            let index = *next;
            let turn = self.turns.get(index).ok_or(ModelError::ScriptExhausted {
                turns: self.turns.len(),
            })?;
            *next += 1;
            let tool_calls = turn
                .tool_calls
                .iter()
                .enumerate()
                .map(|(j, call)| ToolCall {
                    id: call
                        .id
                        .clone()
                        .unwrap_or_else(|| format!("call_{}_{}", index + 1, j + 1)),
                    name: call.name.clone(),
                    arguments: call
                        .arguments
                        .clone()
                        .unwrap_or_else(|| Value::Object(Default::default())),
                })
                .collect();
            Ok(ModelReply {
                text: turn.text.clone(),
                tool_calls,
            })
        })();
        Box::pin(async move { reply })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn turns_play_in_order_with_generated_ids_then_the_script_is_exhausted() {
        let model = ScriptedModel::from_json(
            r#"{"turns": [
                {"toolCalls": [{"name": "s__a", "arguments": {"x": 1}}, {"name": "s__b"}]},
                {"text": "done"}
            ]}"#,
        )
        .unwrap();
        let c = Conversation::new();
        let first = model.respond(&c, &[]).await.unwrap();
        assert_eq!(first.text, None);
        assert_eq!(first.tool_calls[0].id, "call_1_1");
        assert_eq!(first.tool_calls[0].arguments, serde_json::json!({"x": 1}));
        assert_eq!(first.tool_calls[1].arguments, serde_json::json!({}));
        let second = model.respond(&c, &[]).await.unwrap();
        assert_eq!(second.text.as_deref(), Some("done"));
        assert!(second.tool_calls.is_empty());
        let err = model.respond(&c, &[]).await.unwrap_err();
        assert!(
            matches!(err, ModelError::ScriptExhausted { turns: 2 }),
            "{err}"
        );
        assert_eq!(model.played(), 2);
    }

    #[test]
    fn a_bare_list_is_a_script_and_bad_scripts_are_refused() {
        assert!(ScriptedModel::from_json(r#"[{"text": "hi"}]"#).is_ok());
        let empty_turn = ScriptedModel::from_json(r#"[{"text": "hi"}, {}]"#).unwrap_err();
        assert!(empty_turn.to_string().contains("turn 1"), "{empty_turn}");
        let typo = ScriptedModel::from_json(r#"[{"txt": "hi"}]"#).unwrap_err();
        assert!(matches!(typo, ModelError::Script { .. }));
    }
}
