//! The chat's line editor (rustyline) with Tab completion of the chat's commands, the
//! servers' prompt commands, attachable resources and, through the server's
//! `completion/complete`, prompt arguments.
//!
//! Completion runs on the editor's thread while the chat waits for the line, so it takes
//! the host's lock (free at that moment) and runs the host's async completion to the end.

use std::collections::BTreeMap;
use std::sync::Arc;

use junction_host::Host;
use rustyline::completion::Completer;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};
use tokio::runtime::Handle;
use tokio::sync::Mutex;

/// The chat's own commands, offered by completion.
pub const BUILTINS: &[&str] = &[
    "/help",
    "/tools",
    "/prompts",
    "/resources",
    "/servers",
    "/mcp",
    "/restart",
    "/logs",
    "/roots",
    "/tasks",
    "/quit",
];

/// Completes lines against a host.
pub struct ChatHelper {
    host: Arc<Mutex<Host>>,
    runtime: Handle,
}

/// The line editor the chat reads with.
pub type ChatEditor = Editor<ChatHelper, DefaultHistory>;

/// An editor that completes against `host`.
pub fn editor(host: Arc<Mutex<Host>>, runtime: Handle) -> rustyline::Result<ChatEditor> {
    let mut editor = ChatEditor::new()?;
    editor.set_helper(Some(ChatHelper { host, runtime }));
    Ok(editor)
}

/// What the cursor is in.
#[derive(Debug, PartialEq, Eq)]
pub enum Target<'a> {
    /// The first word: a command or an attachment; the candidates are every word that
    /// starts with it.
    Word(&'a str),
    /// A prompt argument's value.
    Argument {
        /// The server.
        server: &'a str,
        /// The prompt.
        prompt: &'a str,
        /// The argument's name (`key=`), or its position among the positional values.
        argument: Result<&'a str, usize>,
        /// What is typed of the value so far.
        partial: &'a str,
        /// The arguments already given by name.
        named: BTreeMap<String, String>,
    },
}

/// Where the completed text starts and what is being completed, for the text before the
/// cursor.
pub fn target(before: &str) -> Option<(usize, Target<'_>)> {
    let start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let word = &before[start..];
    if start == 0 {
        return Some((0, Target::Word(word)));
    }
    let head = before.split_whitespace().next()?;
    let (server, prompt) = head.strip_prefix('/')?.split_once(':')?;
    let mut named = BTreeMap::new();
    let mut positional = 0;
    for done in before[head.len()..start].split_whitespace() {
        match done.split_once('=') {
            Some((key, value)) => {
                named.insert(key.to_owned(), value.to_owned());
            }
            None => positional += 1,
        }
    }
    let (argument, partial, at) = match word.split_once('=') {
        Some((key, value)) => (Ok(key), value, start + key.len() + 1),
        None => (Err(positional), word, start),
    };
    Some((
        at,
        Target::Argument {
            server,
            prompt,
            argument,
            partial,
            named,
        },
    ))
}

impl ChatHelper {
    fn candidates(&self, before: &str) -> (usize, Vec<String>) {
        let Some((start, target)) = target(before) else {
            return (0, Vec::new());
        };
        let host = self.host.blocking_lock();
        match target {
            Target::Word(word) => {
                let mut words: Vec<String> = BUILTINS.iter().map(|b| (*b).to_owned()).collect();
                for server in host.servers().iter() {
                    words.extend(
                        server
                            .prompts()
                            .iter()
                            .map(|p| format!("/{}:{}", server.name, p.name)),
                    );
                }
                words.extend(host.attachables().iter().map(|a| a.reference()));
                words.retain(|w| w.starts_with(word));
                (start, words)
            }
            Target::Argument {
                server,
                prompt,
                argument,
                partial,
                named,
            } => {
                let Some(connected) = host.servers().get(server) else {
                    return (start, Vec::new());
                };
                let declared = connected
                    .prompts()
                    .into_iter()
                    .find(|p| p.name == prompt)
                    .and_then(|p| p.arguments)
                    .unwrap_or_default();
                let name = match argument {
                    Ok(name) => name.to_owned(),
                    // Positional values fill the arguments not given by name, in order.
                    Err(index) => match declared
                        .iter()
                        .filter(|a| !named.contains_key(&a.name))
                        .nth(index)
                    {
                        Some(a) => a.name.clone(),
                        None => return (start, Vec::new()),
                    },
                };
                let values = self
                    .runtime
                    .block_on(host.complete_prompt_argument(server, prompt, &name, partial, &named))
                    .unwrap_or_default();
                (start, values)
            }
        }
    }
}

impl Completer for ChatHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(self.candidates(&line[..pos]))
    }
}

impl Hinter for ChatHelper {
    type Hint = String;
}

impl Highlighter for ChatHelper {}

impl Validator for ChatHelper {}

impl Helper for ChatHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_word_is_completed_as_a_command_or_attachment() {
        assert_eq!(target("/to"), Some((0, Target::Word("/to"))));
        assert_eq!(target("@lib:"), Some((0, Target::Word("@lib:"))));
    }

    #[test]
    fn prompt_arguments_are_found_by_name_or_position() {
        assert_eq!(
            target("/lib:reading_list topic=sci"),
            Some((
                24,
                Target::Argument {
                    server: "lib",
                    prompt: "reading_list",
                    argument: Ok("topic"),
                    partial: "sci",
                    named: BTreeMap::new(),
                }
            ))
        );
        assert_eq!(
            target("/lib:reading_list level=easy first se"),
            Some((
                35,
                Target::Argument {
                    server: "lib",
                    prompt: "reading_list",
                    argument: Err(1),
                    partial: "se",
                    named: [("level".to_owned(), "easy".to_owned())].into(),
                }
            ))
        );
    }

    #[test]
    fn words_after_plain_text_are_not_completed() {
        assert_eq!(target("hello there"), None);
    }
}
