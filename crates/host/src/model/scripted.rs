//! A model that plays a script: for demos and tests without a provider.
//!
//! A script is JSON, a list of turns (or `{"turns": [...]}`); each turn has optional `text`
//! and optional `toolCalls` (`name` is the model name, `arguments` an object, `id` optional).
//! A turn `{"sampling": {...}}`, with the same members plus an optional `model`, answers a
//! server's sampling request instead: agent turns and sampling turns are two queues, each
//! played in order, so a tool that samples in the middle of a run takes the next sampling
//! turn and the agent loop the next agent turn.
//!
//! ```json
//! [ {"toolCalls": [{"name": "library__summarize", "arguments": {"id": 7}}]},
//!   {"sampling": {"text": "A book about sand."}},
//!   {"text": "It is a book about sand."} ]
//! ```

use std::sync::Mutex;

use junction::session::BoxFuture;
use junction_protocol::sampling::{CreateMessageParams, CreateMessageResult};
use serde::Deserialize;
use serde_json::Value;

use super::{sampling, Model, ModelError, ModelReply, ModelRequest};
use crate::conversation::ToolCall;

/// The name scripted sampling answers carry unless their turn sets `model`.
pub const SCRIPTED_MODEL_NAME: &str = "scripted";

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
struct SamplingTurn {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ScriptedCall>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Turn {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ScriptedCall>,
    #[serde(default)]
    sampling: Option<SamplingTurn>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Script {
    Turns(Vec<Turn>),
    Object { turns: Vec<Turn> },
}

/// What the script has played and been asked.
#[derive(Debug, Default)]
struct Played {
    turns: usize,
    samplings: usize,
    offered: Vec<Vec<String>>,
    systems: Vec<Option<String>>,
    sampled: Vec<CreateMessageParams>,
}

/// Plays turns in order; each `respond` takes the next agent turn, each `sample` the next
/// sampling turn.
#[derive(Debug)]
pub struct ScriptedModel {
    turns: Vec<Turn>,
    samplings: Vec<SamplingTurn>,
    played: Mutex<Played>,
}

fn calls(calls: &[ScriptedCall], prefix: &str, index: usize) -> Vec<ToolCall> {
    calls
        .iter()
        .enumerate()
        .map(|(j, call)| ToolCall {
            id: call
                .id
                .clone()
                .unwrap_or_else(|| format!("{prefix}_{}_{}", index + 1, j + 1)),
            name: call.name.clone(),
            arguments: call
                .arguments
                .clone()
                .unwrap_or_else(|| Value::Object(Default::default())),
        })
        .collect()
}

impl ScriptedModel {
    /// Reads a script from JSON.
    pub fn from_json(text: &str) -> Result<Self, ModelError> {
        let script: Script = serde_json::from_str(text).map_err(|e| ModelError::Script {
            reason: e.to_string(),
        })?;
        let all = match script {
            Script::Turns(turns) | Script::Object { turns } => turns,
        };
        let mut turns = Vec::new();
        let mut samplings = Vec::new();
        for (i, turn) in all.into_iter().enumerate() {
            let problem = match &turn.sampling {
                Some(_) if turn.text.is_some() || !turn.tool_calls.is_empty() => {
                    Some("a `sampling` turn holds its `text` and `toolCalls` inside `sampling`")
                }
                Some(s) if s.text.is_none() && s.tool_calls.is_empty() => {
                    Some("its `sampling` has neither `text` nor `toolCalls`")
                }
                None if turn.text.is_none() && turn.tool_calls.is_empty() => {
                    Some("it has neither `text` nor `toolCalls`")
                }
                _ => None,
            };
            if let Some(problem) = problem {
                return Err(ModelError::Script {
                    reason: format!("turn {i}: {problem}"),
                });
            }
            match turn.sampling {
                Some(sampling) => samplings.push(sampling),
                None => turns.push(turn),
            }
        }
        Ok(ScriptedModel {
            turns,
            samplings,
            played: Mutex::new(Played::default()),
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
                sampling: None,
            })
            .collect();
        ScriptedModel {
            turns,
            samplings: Vec::new(),
            played: Mutex::new(Played::default()),
        }
    }

    fn played_state<T>(&self, read: impl FnOnce(&Played) -> T) -> T {
        match self.played.lock() {
            Ok(played) => read(&played),
            Err(poisoned) => read(&poisoned.into_inner()),
        }
    }

    /// How many agent turns have been played.
    pub fn played(&self) -> usize {
        self.played_state(|p| p.turns)
    }

    /// The tool names offered at each agent turn so far.
    pub fn offered_tools(&self) -> Vec<Vec<String>> {
        self.played_state(|p| p.offered.clone())
    }

    /// The system prompt given at each agent turn so far.
    pub fn system_prompts(&self) -> Vec<Option<String>> {
        self.played_state(|p| p.systems.clone())
    }

    /// The sampling requests the model was given so far (also those the script could not
    /// answer).
    pub fn sampled(&self) -> Vec<CreateMessageParams> {
        self.played_state(|p| p.sampled.clone())
    }
}

impl Model for ScriptedModel {
    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        let reply = (|| {
            let mut played = self.played.lock().map_err(|_| ModelError::Script {
                reason: "the script's position was lost".to_owned(),
            })?;
            played
                .offered
                .push(request.tools.iter().map(|t| t.name.clone()).collect());
            played.systems.push(request.system.map(str::to_owned));
            let index = played.turns;
            let turn = self.turns.get(index).ok_or(ModelError::ScriptExhausted {
                turns: self.turns.len(),
            })?;
            played.turns += 1;
            Ok(ModelReply {
                text: turn.text.clone(),
                tool_calls: calls(&turn.tool_calls, "call", index),
                ..ModelReply::default()
            })
        })();
        // The script's text arrives in one piece, the way a stream's would.
        if let Ok(ModelReply {
            text: Some(text), ..
        }) = &reply
        {
            request.text_arrived(text);
        }
        Box::pin(async move { reply })
    }

    fn name(&self) -> &str {
        SCRIPTED_MODEL_NAME
    }

    fn sample<'a>(
        &'a self,
        params: &'a CreateMessageParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ModelError>> {
        let answer = (|| {
            let mut played = self.played.lock().map_err(|_| ModelError::Script {
                reason: "the script's position was lost".to_owned(),
            })?;
            played.sampled.push(params.clone());
            let index = played.samplings;
            let turn = self
                .samplings
                .get(index)
                .ok_or(ModelError::ScriptExhausted {
                    turns: self.samplings.len(),
                })?;
            played.samplings += 1;
            let reply = ModelReply {
                text: turn.text.clone(),
                tool_calls: calls(&turn.tool_calls, "use", index),
                ..ModelReply::default()
            };
            let model = turn.model.as_deref().unwrap_or(SCRIPTED_MODEL_NAME);
            Ok(sampling::answer(model, reply))
        })();
        Box::pin(async move { answer })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::Conversation;

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
        let first = model.respond(ModelRequest::new(&c, &[])).await.unwrap();
        assert_eq!(first.text, None);
        assert_eq!(first.tool_calls[0].id, "call_1_1");
        assert_eq!(first.tool_calls[0].arguments, serde_json::json!({"x": 1}));
        assert_eq!(first.tool_calls[1].arguments, serde_json::json!({}));
        let second = model.respond(ModelRequest::new(&c, &[])).await.unwrap();
        assert_eq!(second.text.as_deref(), Some("done"));
        assert!(second.tool_calls.is_empty());
        let err = model.respond(ModelRequest::new(&c, &[])).await.unwrap_err();
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
        let mixed =
            ScriptedModel::from_json(r#"[{"text": "a", "sampling": {"text": "b"}}]"#).unwrap_err();
        assert!(mixed.to_string().contains("turn 0"), "{mixed}");
        let empty = ScriptedModel::from_json(r#"[{"sampling": {}}]"#).unwrap_err();
        assert!(empty.to_string().contains("sampling"), "{empty}");
    }

    #[tokio::test]
    async fn sampling_turns_are_a_queue_of_their_own() {
        use junction_protocol::sampling::{SamplingMessage, StopReason};
        let model = ScriptedModel::from_json(
            r#"[
                {"text": "agent one"},
                {"sampling": {"text": "sampled one", "model": "tiny"}},
                {"sampling": {"toolCalls": [{"name": "weather", "arguments": {"city": "Oslo"}}]}},
                {"text": "agent two"}
            ]"#,
        )
        .unwrap();
        let params = CreateMessageParams::new(vec![SamplingMessage::user_text("hi")], 10);
        let first = model.sample(&params).await.unwrap();
        assert_eq!(first, CreateMessageResult::text("tiny", "sampled one"));
        let c = Conversation::new();
        let agent = model.respond(ModelRequest::new(&c, &[])).await.unwrap();
        assert_eq!(agent.text.as_deref(), Some("agent one"));
        let second = model.sample(&params).await.unwrap();
        assert_eq!(second.model, SCRIPTED_MODEL_NAME);
        assert_eq!(second.stop_reason, Some(StopReason::TOOL_USE));
        let err = model.sample(&params).await.unwrap_err();
        assert!(
            matches!(err, ModelError::ScriptExhausted { turns: 2 }),
            "{err}"
        );
        assert_eq!(model.sampled().len(), 3);
        assert_eq!(
            model
                .respond(ModelRequest::new(&c, &[]))
                .await
                .unwrap()
                .text
                .as_deref(),
            Some("agent two")
        );
        assert_eq!(model.played(), 2);
    }
}
