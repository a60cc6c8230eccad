//! Each host [`Event`] as lines for the terminal.
//!
//! The renderer remembers which tool each call id belongs to, so that a call's result names
//! its tool even though the host's `ToolCallFinished` carries only the id. Streamed text
//! grows on its line as it arrives ([`Renderer::output`]); the line is ended by the whole
//! text that follows it, or by whatever is shown next.
//!
//! Every string that came from a server or the model goes through
//! [`junction_host::display`] before it is shown: escape sequences and other controls
//! appear escaped, invisible characters visible, long names cut.

use std::collections::HashMap;

use junction_host::consent::ConsentAnswer;
use junction_host::conversation::UNKNOWN_BLOCK;
use junction_host::display;
use junction_host::events::{Event, ServerState};
use junction_protocol::elicitation::{ElicitAction, ElicitParams};
use junction_protocol::sampling::{CreateMessageResult, SamplingMessageContentBlock};
use serde_json::Value;

use super::markdown::Markdown;
use super::shorten;
use super::style::{Paint, Style};

/// How many characters of a tool's arguments are shown.
const ARGUMENTS_SHOWN: usize = 120;
/// How many characters of a tool's result or a log message are shown.
const RESULT_SHOWN: usize = 300;

/// Turns events into lines.
#[derive(Debug)]
pub struct Renderer {
    style: Style,
    calls: HashMap<String, String>,
    /// Whether streamed text is on the current line, not yet ended.
    streaming: bool,
    /// The model's Markdown renderer, when answers are rendered.
    markdown: Option<Markdown>,
    /// Whether the streamed answer has shown a line yet (the first follows `assistant:`).
    answer_started: bool,
}

/// `value` as one line of JSON (strings without their quotes), safe to show, at most
/// `limit` characters.
pub fn compact(value: &Value, limit: usize) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    shorten(&display::line(&text.replace('\n', " ")), limit)
}

/// `server.tool`, each part safe to show.
pub fn call_name(server: &str, tool: &str) -> String {
    format!("{}.{}", display::name(server), display::name(tool))
}

/// The text of a sampling answer (non-text blocks named by kind).
pub fn sampling_text(result: &CreateMessageResult) -> String {
    blocks_text(result.content.blocks())
}

/// The text of sampling blocks, non-text blocks named by kind.
pub fn blocks_text(blocks: &[SamplingMessageContentBlock]) -> String {
    blocks
        .iter()
        .map(|b| match b {
            SamplingMessageContentBlock::Text(t) => t.text.clone(),
            SamplingMessageContentBlock::Image(_) => "[image]".to_owned(),
            SamplingMessageContentBlock::Audio(_) => "[audio]".to_owned(),
            SamplingMessageContentBlock::ToolUse(u) => format!("[calls tool {}]", u.name),
            SamplingMessageContentBlock::ToolResult(_) => "[tool result]".to_owned(),
            _ => UNKNOWN_BLOCK.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Renderer {
    /// A renderer that colours with `style`.
    pub fn new(style: Style) -> Self {
        Renderer {
            style,
            calls: HashMap::new(),
            streaming: false,
            markdown: None,
            answer_started: false,
        }
    }

    /// Renders the model's answers as Markdown (see [`Markdown`]): a streamed answer is
    /// shown line by line, each line once it is finished.
    pub fn with_markdown(mut self) -> Self {
        self.markdown = Some(Markdown::new(self.style));
        self
    }

    /// Rendered lines of an answer, each ended; the first follows `assistant:`, the
    /// others are indented under it.
    fn answer_lines(&mut self, lines: Vec<String>) -> String {
        let mut out = String::new();
        for line in lines {
            if std::mem::replace(&mut self.answer_started, true) {
                out.push_str("  ");
            }
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// What ends a streamed answer: with Markdown, its unfinished last line; otherwise
    /// the end of the line.
    fn end_answer(&mut self) -> String {
        self.streaming = false;
        let Some(markdown) = self.markdown.as_mut() else {
            return "\n".to_owned();
        };
        let rest = markdown.finish();
        let nothing_shown = !self.answer_started && rest.is_empty();
        let mut out = self.answer_lines(rest);
        if nothing_shown {
            out.push('\n');
        }
        out
    }

    /// The exact text to write for one event: whole lines, each ending in a newline,
    /// except for a piece of streamed text, which is written as it is so that the answer
    /// grows as the model writes it.
    pub fn output(&mut self, event: &Event) -> String {
        let mut out = String::new();
        match event {
            Event::TextDelta { text } => {
                if !self.streaming {
                    out.push_str(&self.paint(Paint::Bold, "assistant:"));
                    out.push(' ');
                    self.streaming = true;
                    self.answer_started = false;
                }
                if let Some(markdown) = self.markdown.as_mut() {
                    let lines = markdown.push(&display::text(text));
                    out.push_str(&self.answer_lines(lines));
                    return out;
                }
                let text = display::text(text).replace('\n', "\n  ");
                out.push_str(&self.paint(Paint::Cyan, &text));
                return out;
            }
            // The text was shown as it came: the line only needs ending.
            Event::Text { .. } if self.streaming => return self.end_answer(),
            _ => {}
        }
        let lines = self.render(event);
        let ends_line = !lines.is_empty() || matches!(event, Event::ModelFailed { .. });
        if ends_line && self.streaming {
            out.push_str(&self.end_answer());
        }
        for line in lines {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    fn paint(&self, paint: Paint, text: &str) -> String {
        self.style.paint(paint, text)
    }

    /// The lines for one event.
    pub fn render(&mut self, event: &Event) -> Vec<String> {
        match event {
            Event::ServerStatus { server, state } => self.status(&display::name(server), state),
            // Shown by `output`, or not at all.
            // The command that ran the turn says why it failed.
            Event::Thinking
            | Event::TextDelta { .. }
            | Event::ModelAnswered { .. }
            | Event::ModelFailed { .. } => Vec::new(),
            Event::Text { text } if self.markdown.is_some() => {
                let text = display::text(text);
                let mut lines = Vec::new();
                if let Some(markdown) = self.markdown.as_mut() {
                    lines = markdown.push(&text);
                    lines.extend(markdown.finish());
                }
                let mut lines = lines.into_iter();
                let first = lines.next().unwrap_or_default();
                let mut out = vec![format!("{} {first}", self.paint(Paint::Bold, "assistant:"))];
                out.extend(lines.map(|l| format!("  {l}")));
                out
            }
            Event::Text { text } => {
                let text = display::text(text);
                let mut lines = text.lines();
                let first = lines.next().unwrap_or_default();
                let mut out = vec![format!(
                    "{} {}",
                    self.paint(Paint::Bold, "assistant:"),
                    self.paint(Paint::Cyan, first)
                )];
                out.extend(lines.map(|l| format!("  {}", self.paint(Paint::Cyan, l))));
                out
            }
            Event::ToolCallStarted {
                call_id,
                server,
                tool,
                arguments,
            } => {
                let name = if server.is_empty() {
                    format!("{} (no server offers it)", display::name(tool))
                } else {
                    call_name(server, tool)
                };
                self.calls.insert(call_id.clone(), name.clone());
                vec![format!(
                    "→ call {} {}",
                    self.paint(Paint::Bold, &name),
                    compact(arguments, ARGUMENTS_SHOWN)
                )]
            }
            Event::ConsentAsked { call_id, request } => vec![self.paint(
                Paint::Yellow,
                &format!(
                    "? consent needed for {}: {}",
                    self.call_name(call_id, &call_name(&request.server, &request.tool)),
                    display::line(&request.reason)
                ),
            )],
            Event::ConsentAnswered { call_id, answer } => {
                let said = match answer {
                    ConsentAnswer::AllowOnce => "allowed once",
                    ConsentAnswer::AllowForSession => "allowed for this session",
                    ConsentAnswer::AlwaysAllow => "always allowed",
                    ConsentAnswer::Deny => "denied",
                    ConsentAnswer::NobodyToAsk => "denied (nobody to ask)",
                };
                vec![format!(
                    "  consent for {}: {said}",
                    self.call_name(call_id, call_id)
                )]
            }
            Event::ToolCallDenied { call_id, reason } => vec![self.paint(
                Paint::Red,
                &format!(
                    "✗ {} was not run: {}",
                    self.call_name(call_id, &display::line(call_id)),
                    display::line(reason)
                ),
            )],
            Event::ToolCallFinished {
                call_id,
                is_error,
                output,
            } => {
                let name = self
                    .calls
                    .remove(call_id)
                    .unwrap_or_else(|| display::line(call_id));
                let output = shorten(&display::text(output.trim()), RESULT_SHOWN);
                let (mark, paint) = if *is_error {
                    ("error", Paint::Red)
                } else {
                    ("ok", Paint::Green)
                };
                let mut lines = output.lines();
                let mut out = vec![format!(
                    "← {name} {}: {}",
                    self.paint(paint, mark),
                    lines.next().unwrap_or_default()
                )];
                out.extend(lines.map(|l| format!("  {l}")));
                out
            }
            Event::ToolOutputCut {
                call_id,
                total_chars,
                kept_chars,
            } => vec![self.paint(
                Paint::Yellow,
                &format!(
                    "! {} returned {total_chars} characters; the model sees the first {kept_chars}",
                    self.call_name(call_id, &display::line(call_id))
                ),
            )],
            Event::ContextAttached { source, chars } => {
                vec![format!(
                    "+ attached {} ({chars} characters)",
                    display::line(source)
                )]
            }
            Event::LogLine {
                server,
                level,
                logger,
                data,
            } => {
                let from = match logger {
                    Some(logger) => format!("{}/{}", display::name(server), display::name(logger)),
                    None => display::name(server),
                };
                vec![self.paint(
                    Paint::Dim,
                    &format!(
                        "[{from} {}] {}",
                        display::name(level),
                        compact(data, RESULT_SHOWN)
                    ),
                )]
            }
            Event::ServerNotification {
                server,
                method,
                params,
            } => {
                let params = params
                    .as_ref()
                    .map(|p| format!(" {}", compact(p, ARGUMENTS_SHOWN)))
                    .unwrap_or_default();
                vec![self.paint(
                    Paint::Dim,
                    &format!(
                        "[{}] {}{params}",
                        display::name(server),
                        display::name(method)
                    ),
                )]
            }
            Event::SamplingRequested { request } => {
                let n = request.params.messages.len();
                vec![self.paint(
                    Paint::Yellow,
                    &format!(
                        "? {} asks the model for a completion ({n} message{}, at most {} tokens)",
                        display::name(&request.server),
                        if n == 1 { "" } else { "s" },
                        request.params.max_tokens
                    ),
                )]
            }
            Event::SamplingDenied { server, reason } => vec![self.paint(
                Paint::Red,
                &format!(
                    "✗ sampling for {} refused: {}",
                    display::name(server),
                    display::line(reason)
                ),
            )],
            Event::SamplingAnswered { server, result } => vec![format!(
                "  sampling for {} answered by {}: {}",
                display::name(server),
                display::name(&result.model),
                shorten(
                    &display::line(&sampling_text(result).replace('\n', " ")),
                    RESULT_SHOWN
                )
            )],
            Event::ElicitationRequested { request } => {
                let mut out = vec![self.paint(
                    Paint::Yellow,
                    &format!(
                        "? {} asks you: {}",
                        display::name(&request.server),
                        display::line(request.params.message())
                    ),
                )];
                if let ElicitParams::Url(url) = &request.params {
                    out.push(format!("  URL: {}", display::line(&url.url)));
                }
                out
            }
            Event::ElicitationAnswered { server, action } => {
                let said = match action {
                    ElicitAction::Accept => "accepted",
                    ElicitAction::Decline => "declined",
                    ElicitAction::Cancel => "cancelled",
                };
                vec![format!("  your answer to {}: {said}", display::name(server))]
            }
            Event::ElicitationCompleted {
                server,
                elicitation_id,
            } => vec![format!(
                "  {} says elicitation {} is complete",
                display::name(server),
                display::line(elicitation_id)
            )],
            Event::ToolsChanged { server, tools } => vec![format!(
                "~ {}'s tools changed: {}",
                display::name(server),
                if tools.is_empty() {
                    "none now".to_owned()
                } else {
                    tools
                        .iter()
                        .map(|t| display::name(t))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )],
            Event::PromptsChanged { server, prompts } => {
                vec![format!(
                    "~ {}'s prompts changed: {prompts} now",
                    display::name(server)
                )]
            }
            Event::ResourcesChanged { server, resources } => {
                vec![format!(
                    "~ {}'s resources changed: {resources} now",
                    display::name(server)
                )]
            }
            Event::ResourceUpdated { server, uri } => {
                vec![format!(
                    "~ {} updated {}",
                    display::name(server),
                    display::line(uri)
                )]
            }
            Event::RootsChanged { server, roots } => vec![format!(
                "~ {}'s roots are now: {}",
                display::name(server),
                if roots.is_empty() {
                    "none".to_owned()
                } else {
                    display::line(&roots.join(", "))
                }
            )],
            Event::Warning { message } => {
                vec![self.paint(
                    Paint::Yellow,
                    &format!("warning: {}", display::line(message)),
                )]
            }
            Event::StepLimitReached { steps } => vec![self.paint(
                Paint::Yellow,
                &format!("stopped: the model used all {steps} steps of this turn and still asked for tools"),
            )],
            Event::ToolProgress {
                call_id,
                progress,
                total,
                message,
            } => vec![self.progress(call_id, *progress, *total, message.as_deref())],
            Event::TaskStatus {
                call_id,
                task_id,
                status,
                message,
            } => {
                let name = self.call_name(call_id, &display::line(call_id));
                let message = message
                    .as_deref()
                    .map(|m| format!(": {}", shorten(&display::line(m), RESULT_SHOWN)))
                    .unwrap_or_default();
                vec![self.paint(
                    Paint::Dim,
                    &format!("  {name} task {} {status}{message}", display::name(task_id)),
                )]
            }
            Event::Interrupted => vec![self.paint(
                Paint::Yellow,
                "interrupted: the turn was stopped and its running calls cancelled; the conversation keeps what happened",
            )],
        }
    }

    /// `  slow.work ▕████░░░░░░▏ 40% message`, or the count alone without a total.
    fn progress(
        &self,
        call_id: &str,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> String {
        let name = self.call_name(call_id, &display::line(call_id));
        let bar = match total.filter(|t| *t > 0.0) {
            Some(total) => {
                let fraction = (progress / total).clamp(0.0, 1.0);
                // Rounded down to whole cells of ten.
                let filled = (fraction * 10.0) as usize;
                format!(
                    "▕{}{}▏ {:>3}%",
                    "█".repeat(filled),
                    "░".repeat(10 - filled),
                    (fraction * 100.0).round()
                )
            }
            None => format!("{progress} so far"),
        };
        let message = message
            .map(|m| format!(" {}", shorten(&display::line(m), RESULT_SHOWN)))
            .unwrap_or_default();
        self.paint(Paint::Dim, &format!("  {name} {bar}{message}"))
    }

    fn call_name(&self, call_id: &str, otherwise: &str) -> String {
        self.calls
            .get(call_id)
            .cloned()
            .unwrap_or_else(|| otherwise.to_owned())
    }

    fn status(&self, server: &str, state: &ServerState) -> Vec<String> {
        match state {
            ServerState::Starting => {
                vec![self.paint(Paint::Dim, &format!("server {server}: starting"))]
            }
            ServerState::Ready {
                tools,
                prompts,
                resources,
            } => vec![format!(
                "server {server}: {} ({}, {}, {})",
                self.paint(Paint::Green, "ready"),
                count(*tools, "tool"),
                count(*prompts, "prompt"),
                count(*resources, "resource")
            )],
            ServerState::Disabled => vec![format!("server {server}: disabled in the config")],
            ServerState::Stopped {
                reason,
                stderr_tail,
            } => {
                let mut out = vec![format!(
                    "server {server}: {} {} (started again on the next call to it, or /restart {server})",
                    self.paint(Paint::Red, "stopped:"),
                    display::line(reason)
                )];
                out.extend(self.tail(stderr_tail));
                out
            }
            ServerState::Failed {
                reason,
                stderr_tail,
            } => {
                let mut out = vec![format!(
                    "server {server}: {} {}",
                    self.paint(Paint::Red, "failed to start:"),
                    display::line(reason)
                )];
                out.extend(self.tail(stderr_tail));
                out
            }
        }
    }

    /// A server's last stderr lines, under a heading; nothing when there are none.
    fn tail(&self, stderr_tail: &[String]) -> Vec<String> {
        if stderr_tail.is_empty() {
            return Vec::new();
        }
        let mut out = vec!["  its stderr ended with:".to_owned()];
        out.extend(
            stderr_tail
                .iter()
                .map(|l| self.paint(Paint::Dim, &format!("  | {}", display::line(l)))),
        );
        out
    }
}

fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use junction_host::consent::ConsentRequest;
    use junction_host::interaction::{ElicitationRequest, SamplingRequest};
    use junction_protocol::elicitation::{FormParams, RequestedSchema, UrlParams};
    use junction_protocol::sampling::{CreateMessageParams, SamplingMessage};
    use serde_json::json;

    fn one(event: Event) -> Vec<String> {
        Renderer::new(Style::plain()).render(&event)
    }

    #[test]
    fn server_states_show_counts_and_failures_with_their_stderr() {
        assert_eq!(
            one(Event::ServerStatus {
                server: "lib".into(),
                state: ServerState::Starting
            }),
            ["server lib: starting"]
        );
        assert_eq!(
            one(Event::ServerStatus {
                server: "lib".into(),
                state: ServerState::Ready {
                    tools: 1,
                    prompts: 0,
                    resources: 2
                }
            }),
            ["server lib: ready (1 tool, 0 prompts, 2 resources)"]
        );
        assert_eq!(
            one(Event::ServerStatus {
                server: "off".into(),
                state: ServerState::Disabled
            }),
            ["server off: disabled in the config"]
        );
        assert_eq!(
            one(Event::ServerStatus {
                server: "db".into(),
                state: ServerState::Stopped {
                    reason: "its process exited with status 1".into(),
                    stderr_tail: vec!["oom\u{1b}[2J".into()]
                }
            }),
            [
                "server db: stopped: its process exited with status 1 (started again on the next call to it, or /restart db)",
                "  its stderr ended with:",
                "  | oom\\x1b[2J"
            ]
        );
        assert_eq!(
            one(Event::ServerStatus {
                server: "bad".into(),
                state: ServerState::Failed {
                    reason: "it exited".into(),
                    stderr_tail: vec!["boom".into()]
                }
            }),
            [
                "server bad: failed to start: it exited",
                "  its stderr ended with:",
                "  | boom"
            ]
        );
    }

    #[test]
    fn streamed_text_grows_on_its_line_and_is_not_repeated() {
        let mut r = Renderer::new(Style::plain());
        let mut out = String::new();
        for event in [
            Event::Thinking,
            Event::TextDelta { text: "Hel".into() },
            Event::TextDelta {
                text: "lo\nthere \u{1b}[2J".into(),
            },
            Event::ModelAnswered {
                usage: None,
                stop_reason: Some("end_turn".into()),
            },
            Event::Text {
                text: "Hello\nthere \u{1b}[2J".into(),
            },
            Event::StepLimitReached { steps: 1 },
        ] {
            out.push_str(&r.output(&event));
        }
        assert_eq!(
            out,
            "assistant: Hello\n  there \\x1b[2J\nstopped: the model used all 1 steps of this turn and still asked for tools\n"
        );
        let mut r = Renderer::new(Style::plain());
        let cut = r.output(&Event::TextDelta {
            text: "half".into(),
        }) + &r.output(&Event::Interrupted);
        assert!(cut.starts_with("assistant: half\ninterrupted:"), "{cut}");
    }

    #[test]
    fn streamed_markdown_is_rendered_per_finished_line_with_escapes_kept_escaped() {
        let mut r = Renderer::new(Style::coloured()).with_markdown();
        let mut pieces = Vec::new();
        for event in [
            Event::TextDelta {
                text: "# Ti".into(),
            },
            Event::TextDelta {
                text: "tle\n- **a** \u{1b}[2J".into(),
            },
            Event::TextDelta { text: "b".into() },
            Event::Text {
                text: "# Title\n- **a** \u{1b}[2Jb".into(),
            },
        ] {
            pieces.push(r.output(&event));
        }
        assert_eq!(
            pieces[0], "\x1b[1massistant:\x1b[0m ",
            "nothing before the newline"
        );
        assert_eq!(pieces[1], "\x1b[1;36mTitle\x1b[0m\n");
        assert_eq!(pieces[2], "");
        // The model's escape sequence arrives escaped; the only ones sent are the renderer's.
        assert_eq!(
            pieces[3],
            "  • \x1b[36;1ma\x1b[0m\x1b[36m \\x1b[2Jb\x1b[0m\n"
        );

        let mut r = Renderer::new(Style::plain()).with_markdown();
        let cut = r.output(&Event::TextDelta {
            text: "see [x](https://x.dev)".into(),
        }) + &r.output(&Event::Interrupted);
        assert!(
            cut.starts_with("assistant: see x (https://x.dev)\ninterrupted:"),
            "{cut}"
        );
        assert_eq!(
            r.render(&Event::Text {
                text: "*one*\ntwo".into()
            }),
            ["assistant: one", "  two"]
        );
    }

    #[test]
    fn assistant_text_keeps_its_lines() {
        assert_eq!(
            one(Event::Text {
                text: "one\ntwo".into()
            }),
            ["assistant: one", "  two"]
        );
    }

    #[test]
    fn a_call_is_shown_with_server_tool_and_arguments_and_its_result_names_the_tool() {
        let mut r = Renderer::new(Style::plain());
        assert_eq!(
            r.render(&Event::ToolCallStarted {
                call_id: "c1".into(),
                server: "lib".into(),
                tool: "search".into(),
                arguments: json!({"q": "sand"}),
            }),
            [r#"→ call lib.search {"q":"sand"}"#]
        );
        assert_eq!(
            r.render(&Event::ToolCallFinished {
                call_id: "c1".into(),
                is_error: false,
                output: "2 books\n".into(),
            }),
            ["← lib.search ok: 2 books"]
        );
        r.render(&Event::ToolCallStarted {
            call_id: "c2".into(),
            server: String::new(),
            tool: "ghost__walk".into(),
            arguments: json!({}),
        });
        assert_eq!(
            r.render(&Event::ToolCallFinished {
                call_id: "c2".into(),
                is_error: true,
                output: "There is no tool named `ghost__walk`.".into(),
            }),
            ["← ghost__walk (no server offers it) error: There is no tool named `ghost__walk`."]
        );
    }

    #[test]
    fn a_cut_result_and_a_session_answer_name_the_call() {
        let mut r = Renderer::new(Style::plain());
        r.render(&Event::ToolCallStarted {
            call_id: "c".into(),
            server: "s".into(),
            tool: "dump".into(),
            arguments: json!({}),
        });
        assert_eq!(
            r.render(&Event::ConsentAnswered {
                call_id: "c".into(),
                answer: ConsentAnswer::AllowForSession
            }),
            ["  consent for s.dump: allowed for this session"]
        );
        assert_eq!(
            r.render(&Event::ToolOutputCut {
                call_id: "c".into(),
                total_chars: 250_000,
                kept_chars: 100_000,
            }),
            ["! s.dump returned 250000 characters; the model sees the first 100000"]
        );
    }

    #[test]
    fn long_arguments_and_results_are_shortened() {
        let mut r = Renderer::new(Style::plain());
        let line = &r.render(&Event::ToolCallStarted {
            call_id: "c".into(),
            server: "s".into(),
            tool: "t".into(),
            arguments: json!({"text": "x".repeat(500)}),
        })[0];
        assert!(line.ends_with('…') && line.chars().count() < 160, "{line}");
        let line = &r.render(&Event::ToolCallFinished {
            call_id: "c".into(),
            is_error: false,
            output: "y".repeat(1000),
        })[0];
        assert!(line.ends_with('…') && line.chars().count() < 330, "{line}");
    }

    #[test]
    fn consent_questions_answers_and_denials_name_the_call() {
        let mut r = Renderer::new(Style::plain());
        r.render(&Event::ToolCallStarted {
            call_id: "c".into(),
            server: "tasks".into(),
            tool: "delete_task".into(),
            arguments: json!({"id": 3}),
        });
        let request = ConsentRequest {
            server: "tasks".into(),
            tool: "delete_task".into(),
            model_name: "tasks__delete_task".into(),
            arguments: json!({"id": 3}),
            annotations: None,
            trusted: false,
            reason: "it is not marked read-only".into(),
            rememberable: true,
            changes: Vec::new(),
            disguised: false,
        };
        assert_eq!(
            r.render(&Event::ConsentAsked {
                call_id: "c".into(),
                request
            }),
            ["? consent needed for tasks.delete_task: it is not marked read-only"]
        );
        assert_eq!(
            r.render(&Event::ConsentAnswered {
                call_id: "c".into(),
                answer: ConsentAnswer::Deny
            }),
            ["  consent for tasks.delete_task: denied"]
        );
        assert_eq!(
            r.render(&Event::ToolCallDenied {
                call_id: "c".into(),
                reason: "the user said no".into()
            }),
            ["✗ tasks.delete_task was not run: the user said no"]
        );
    }

    #[test]
    fn logs_notifications_and_attachments_are_one_line_each() {
        assert_eq!(
            one(Event::LogLine {
                server: "s".into(),
                level: "info".into(),
                logger: Some("db".into()),
                data: json!("opened"),
            }),
            ["[s/db info] opened"]
        );
        assert_eq!(
            one(Event::LogLine {
                server: "s".into(),
                level: "error".into(),
                logger: None,
                data: json!({"code": 7}),
            }),
            [r#"[s error] {"code":7}"#]
        );
        assert_eq!(
            one(Event::ServerNotification {
                server: "s".into(),
                method: "notifications/progress".into(),
                params: Some(json!({"progress": 1})),
            }),
            [r#"[s] notifications/progress {"progress":1}"#]
        );
        assert_eq!(
            one(Event::ContextAttached {
                source: "@s:file:///a".into(),
                chars: 12
            }),
            ["+ attached @s:file:///a (12 characters)"]
        );
    }

    #[test]
    fn sampling_requests_and_outcomes_name_the_server() {
        let request = SamplingRequest {
            server: "tasks".into(),
            params: CreateMessageParams::new(vec![SamplingMessage::user_text("sum up")], 200),
        };
        assert_eq!(
            one(Event::SamplingRequested { request }),
            ["? tasks asks the model for a completion (1 message, at most 200 tokens)"]
        );
        assert_eq!(
            one(Event::SamplingDenied {
                server: "tasks".into(),
                reason: "the user said no".into()
            }),
            ["✗ sampling for tasks refused: the user said no"]
        );
        assert_eq!(
            one(Event::SamplingAnswered {
                server: "tasks".into(),
                result: CreateMessageResult::text("scripted", "Three tasks done."),
            }),
            ["  sampling for tasks answered by scripted: Three tasks done."]
        );
    }

    #[test]
    fn elicitations_show_the_asking_server_and_a_url_never_opened() {
        let form = ElicitationRequest {
            server: "tasks".into(),
            params: FormParams::new("Delete task 3?", RequestedSchema::new()).into(),
        };
        assert_eq!(
            one(Event::ElicitationRequested { request: form }),
            ["? tasks asks you: Delete task 3?"]
        );
        let url = ElicitationRequest {
            server: "pay".into(),
            params: UrlParams::new("Sign in", "e1", "https://example.com/login").into(),
        };
        assert_eq!(
            one(Event::ElicitationRequested { request: url }),
            [
                "? pay asks you: Sign in",
                "  URL: https://example.com/login"
            ]
        );
        assert_eq!(
            one(Event::ElicitationAnswered {
                server: "tasks".into(),
                action: ElicitAction::Decline
            }),
            ["  your answer to tasks: declined"]
        );
        assert_eq!(
            one(Event::ElicitationCompleted {
                server: "pay".into(),
                elicitation_id: "e1".into()
            }),
            ["  pay says elicitation e1 is complete"]
        );
    }

    #[test]
    fn list_changes_warnings_and_the_step_limit_are_reported() {
        assert_eq!(
            one(Event::ToolsChanged {
                server: "s".into(),
                tools: vec!["a".into(), "b".into()]
            }),
            ["~ s's tools changed: a, b"]
        );
        assert_eq!(
            one(Event::PromptsChanged {
                server: "s".into(),
                prompts: 2
            }),
            ["~ s's prompts changed: 2 now"]
        );
        assert_eq!(
            one(Event::ResourcesChanged {
                server: "s".into(),
                resources: 0
            }),
            ["~ s's resources changed: 0 now"]
        );
        assert_eq!(
            one(Event::ResourceUpdated {
                server: "s".into(),
                uri: "tasks://open".into()
            }),
            ["~ s updated tasks://open"]
        );
        assert_eq!(
            one(Event::RootsChanged {
                server: "s".into(),
                roots: vec!["file:///w".into()]
            }),
            ["~ s's roots are now: file:///w"]
        );
        assert_eq!(
            one(Event::Warning {
                message: "not saved".into()
            }),
            ["warning: not saved"]
        );
        assert_eq!(
            one(Event::StepLimitReached { steps: 10 }),
            ["stopped: the model used all 10 steps of this turn and still asked for tools"]
        );
    }

    #[test]
    fn progress_is_a_bar_with_its_message() {
        let mut r = Renderer::new(Style::plain());
        r.render(&Event::ToolCallStarted {
            call_id: "c".into(),
            server: "slow".into(),
            tool: "work".into(),
            arguments: json!({}),
        });
        assert_eq!(
            r.render(&Event::ToolProgress {
                call_id: "c".into(),
                progress: 2.0,
                total: Some(5.0),
                message: Some("step \u{1b}[2J two".into()),
            }),
            [r"  slow.work ▕████░░░░░░▏  40% step \x1b[2J two"]
        );
        assert_eq!(
            r.render(&Event::ToolProgress {
                call_id: "c".into(),
                progress: 3.0,
                total: None,
                message: None,
            }),
            ["  slow.work 3 so far"]
        );
    }

    #[test]
    fn a_task_shows_its_status_and_message() {
        let mut r = Renderer::new(Style::plain());
        r.render(&Event::ToolCallStarted {
            call_id: "c".into(),
            server: "library".into(),
            tool: "inventory_report".into(),
            arguments: json!({}),
        });
        assert_eq!(
            r.render(&Event::TaskStatus {
                call_id: "c".into(),
                task_id: "t1".into(),
                status: junction_protocol::tasks::TaskStatus::Working,
                message: Some("Counting the \u{1b}[2J science shelf".into()),
            }),
            [r"  library.inventory_report task t1 working: Counting the \x1b[2J science shelf"]
        );
        assert_eq!(
            r.render(&Event::TaskStatus {
                call_id: "c".into(),
                task_id: "t1".into(),
                status: junction_protocol::tasks::TaskStatus::Completed,
                message: None,
            }),
            ["  library.inventory_report task t1 completed"]
        );
    }

    #[test]
    fn colour_wraps_the_marks_when_asked_for() {
        let lines = Renderer::new(Style::coloured()).render(&Event::ServerStatus {
            server: "s".into(),
            state: ServerState::Ready {
                tools: 0,
                prompts: 0,
                resources: 0,
            },
        });
        assert!(lines[0].contains("\x1b[32mready\x1b[0m"), "{lines:?}");
    }
}
