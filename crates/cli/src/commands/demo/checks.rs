//! What the demo proves once the conversation is over, each as one PASS or FAIL line.
//!
//! The evidence is outside the host's own account: the wire logs the servers wrote of
//! every message they received, and the servers themselves, asked after the run. Each
//! check also makes sure its evidence is there (the secret was in the conversation, the
//! calendar did receive the dentist query), so that none passes for lack of traffic.

use std::path::Path;

use junction::schema::CompiledSchema;
use junction_host::conversation::Message;
use junction_host::naming::ToolNames;
use junction_host::servers::StartFailure;
use junction_host::Host;
use serde_json::Value;

use super::SECRET;
use crate::terminal::style::Paint;
use crate::terminal::Style;

/// The servers the demo starts.
pub const SERVERS: [&str; 3] = ["library", "calendar", "tasks"];
/// The library's answer to a checkout of a book with no copies.
pub const NO_COPIES: &str =
    "No copies of 'Maps of Small Rivers' are available. Search for another title.";
/// The calendar's answer to a date it cannot read.
pub const BAD_DATE: &str =
    "Date 'tomorrow' is not in YYYY-MM-DD form. Try again, for example 2026-11-03.";
/// The library tool the demo runs as a task, and how its report begins.
const TASK_TOOL: &str = "inventory_report";
const REPORT_START: &str = "Inventory of ";
/// The call the demo's user refuses.
pub const DENIED_TOOL: &str = "tasks__delete_task";

/// The file name of `server`'s wire log.
pub fn wire_log_name(server: &str) -> String {
    format!("{server}.wire.jsonl")
}

/// One check and how it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What is checked.
    pub name: String,
    /// Whether it holds.
    pub passed: bool,
    /// What was found (on PASS) or what went wrong (on FAIL).
    pub detail: String,
}

impl Check {
    fn new(name: impl Into<String>, outcome: Result<String, String>) -> Check {
        let (passed, detail) = match outcome {
            Ok(detail) => (true, detail),
            Err(detail) => (false, detail),
        };
        Check {
            name: name.into(),
            passed,
            detail,
        }
    }

    /// `PASS  name (detail)` or `FAIL  name: detail`.
    pub fn line(&self, style: Style) -> String {
        match (self.passed, self.detail.is_empty()) {
            (true, true) => format!("{}  {}", style.paint(Paint::Green, "PASS"), self.name),
            (true, false) => format!(
                "{}  {} ({})",
                style.paint(Paint::Green, "PASS"),
                self.name,
                self.detail
            ),
            (false, _) => format!(
                "{}  {}: {}",
                style.paint(Paint::Red, "FAIL"),
                self.name,
                self.detail
            ),
        }
    }
}

/// Every server came up.
pub fn started(failures: &[StartFailure]) -> Check {
    Check::new(
        "the three servers started as child processes",
        if failures.is_empty() {
            Ok(String::new())
        } else {
            Err(failures
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "))
        },
    )
}

/// Every tool call of the model script names a tool the servers offer, with arguments that
/// fit its input schema as the server listed it (the script is data: this keeps it true to
/// the servers).
pub fn script_matches_tools(script: &str, names: &ToolNames) -> Check {
    Check::new(
        "the model script's tool calls name offered tools and fit their input schemas",
        script_problems(script, names),
    )
}

fn script_problems(script: &str, names: &ToolNames) -> Result<String, String> {
    let script: Value = serde_json::from_str(script).map_err(|e| e.to_string())?;
    let turns = match &script {
        Value::Array(turns) => turns.clone(),
        other => other
            .get("turns")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    };
    let mut problems = Vec::new();
    let mut count = 0;
    for call in turns
        .iter()
        .filter_map(|t| t.get("toolCalls").and_then(Value::as_array))
        .flatten()
    {
        count += 1;
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
        let arguments = call
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| Value::Object(Default::default()));
        let Some(entry) = names.resolve(name) else {
            problems.push(format!("no server offers `{name}`"));
            continue;
        };
        match CompiledSchema::new(entry.tool.input_schema.clone()) {
            Ok(schema) => {
                if let Err(found) = schema.check(&arguments) {
                    problems.push(format!("`{name}` {arguments}: {}", found.join(" ")));
                }
            }
            Err(e) => problems.push(format!("`{name}` has an unusable schema: {e}")),
        }
    }
    if problems.is_empty() {
        Ok(format!("{count} calls"))
    } else {
        Err(problems.join("; "))
    }
}

/// Reads `uri` on `server` through the host's own client and looks for `expected` in it:
/// how the demo shows that a refused deletion left the record in place.
pub async fn record_kept(host: &Host, server: &str, uri: &str, expected: &str) -> Check {
    let name = format!(
        "the record survived: {uri} still reads \"{expected}\" from the {server} server afterwards"
    );
    let Some(connected) = host.servers().get(server) else {
        return Check::new(name, Err(format!("the {server} server is not connected")));
    };
    let outcome = match connected.client.read_resource(uri).await {
        Ok(result) => {
            let text: String = result
                .contents
                .iter()
                .map(junction_host::conversation::contents_text)
                .collect();
            if text.contains(expected) {
                Ok(String::new())
            } else {
                Err(format!("it reads {text:?}"))
            }
        }
        Err(e) => Err(format!("reading it failed: {e}")),
    };
    Check::new(name, outcome)
}

/// One server's wire log: every message it received, one per line.
struct WireLog {
    server: &'static str,
    text: Result<String, String>,
}

impl WireLog {
    fn read(dir: &Path, server: &'static str) -> WireLog {
        let path = dir.join(wire_log_name(server));
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()));
        WireLog { server, text }
    }

    fn text(&self) -> &str {
        self.text.as_deref().unwrap_or_default()
    }

    fn messages(&self) -> impl Iterator<Item = Value> + '_ {
        self.text()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
    }

    fn mentions(&self, word: &str) -> bool {
        self.text().to_lowercase().contains(&word.to_lowercase())
    }
}

/// The checks on the wire logs (read once the servers have exited) and the conversation.
pub fn after_run(dir: &Path, conversation: &[Message], kept: Check) -> Vec<Check> {
    let logs = SERVERS.map(|server| WireLog::read(dir, server));
    let [library, calendar, tasks] = &logs;
    let mut checks: Vec<Check> = logs
        .iter()
        .map(|log| {
            Check::new(
                format!("the {} wire log exists and is not empty", log.server),
                match &log.text {
                    Ok(text) if !text.trim().is_empty() => {
                        Ok(format!("{} messages", text.lines().count()))
                    }
                    Ok(_) => Err("it is empty".to_owned()),
                    Err(e) => Err(e.clone()),
                },
            )
        })
        .collect();
    let secret_said = conversation
        .iter()
        .any(|m| matches!(m, Message::User { text } if text.contains(SECRET)));
    let seen_by: Vec<&str> = logs
        .iter()
        .filter(|l| l.mentions(SECRET))
        .map(|l| l.server)
        .collect();
    checks.push(Check::new(
        format!("the secret {SECRET} appears in no wire log"),
        match (secret_said, seen_by.is_empty()) {
            (true, true) => Ok("it is in the conversation, which stays in the host".to_owned()),
            (false, _) => Err("the secret never entered the conversation".to_owned()),
            (true, false) => Err(format!("it reached {}", seen_by.join(", "))),
        },
    ));
    checks.push(isolated(library, calendar, "dentist"));
    checks.push(isolated(calendar, library, "science"));
    checks.push(Check::new(
        "the tasks wire log holds no library or calendar query",
        match ["science", "dentist", "study session"]
            .into_iter()
            .find(|w| tasks.mentions(w))
        {
            None => Ok(String::new()),
            Some(word) => Err(format!("it mentions {word:?}")),
        },
    ));
    let tool = DENIED_TOOL.split_once("__").map_or(DENIED_TOOL, |(_, t)| t);
    let reached = tasks.messages().any(|m| {
        m.get("method").and_then(Value::as_str) == Some("tools/call")
            && m.pointer("/params/name").and_then(Value::as_str) == Some(tool)
    });
    let asked = conversation.iter().any(
        |m| matches!(m, Message::Assistant { tool_calls, .. } if tool_calls.iter().any(|c| c.name == DENIED_TOOL)),
    );
    checks.push(Check::new(
        format!("the denied {DENIED_TOOL} never reached the tasks server (no tools/call of {tool} in its wire log)"),
        match (asked, reached, &tasks.text) {
            (_, _, Err(e)) => Err(e.clone()),
            (false, _, _) => Err(format!("the model never asked for {DENIED_TOOL}")),
            (true, true, _) => Err("the call is in the tasks server's wire log".to_owned()),
            (true, false, _) => Ok(String::new()),
        },
    ));
    checks.push(kept);
    for expected in [NO_COPIES, BAD_DATE] {
        let seen = tool_results(conversation).any(|(_, text, error)| error && text == expected);
        checks.push(Check::new(
            format!("tool error seen verbatim: {expected}"),
            if seen {
                Ok(String::new())
            } else {
                Err("no tool result says exactly this".to_owned())
            },
        ));
    }
    let succeeded = |tool: &str, start: &str| {
        tool_results(conversation)
            .any(|(name, text, error)| name == tool && !error && text.starts_with(start))
    };
    checks.push(Check::new(
        "the retries succeeded: another title checked out, the event added with a real date",
        match (
            succeeded("library__checkout", "Checked out '"),
            succeeded("calendar__add_event", "Added event "),
        ) {
            (true, true) => Ok(String::new()),
            (false, _) => Err("no checkout succeeded".to_owned()),
            (_, false) => Err("no event was added".to_owned()),
        },
    ));
    checks.push(ran_as_task(library, conversation));
    checks.push(Check::new(
        format!("the model was told the user declined {DENIED_TOOL}"),
        if tool_results(conversation).any(|(name, text, error)| {
            name == DENIED_TOOL && error && text.starts_with("The user declined")
        }) {
            Ok(String::new())
        } else {
            Err("no such tool result".to_owned())
        },
    ));
    checks
}

/// The inventory report was a task on the library server (its wire log, which holds what
/// the server received, has the call and then the client's `tasks/get` of the task), and
/// the model got the report.
fn ran_as_task(library: &WireLog, conversation: &[Message]) -> Check {
    let mut called = false;
    let mut task_id = None;
    let mut polls = 0;
    for m in library.messages() {
        match m.get("method").and_then(Value::as_str) {
            Some("tools/call") => {
                called |= m.pointer("/params/name").and_then(Value::as_str) == Some(TASK_TOOL);
            }
            Some("tasks/get") if called => {
                polls += 1;
                task_id = task_id.or_else(|| {
                    m.pointer("/params/taskId")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                });
            }
            _ => {}
        }
    }
    let reported = tool_results(conversation).any(|(name, text, error)| {
        name == format!("library__{TASK_TOOL}") && !error && text.starts_with(REPORT_START)
    });
    Check::new(
        format!("the library's {TASK_TOOL} ran as a task and the model got its report"),
        match (called, task_id, reported) {
            (false, _, _) => Err(format!(
                "no tools/call of {TASK_TOOL} in the library's wire log"
            )),
            (true, None, _) => Err("the client never asked for a task's state".to_owned()),
            (true, Some(_), false) => Err("the model got no report".to_owned()),
            (true, Some(id), true) => Ok(format!("task {id}, polled {polls} times")),
        },
    )
}

/// `log`'s server received `word` only through `other`'s server, never its own.
fn isolated(log: &WireLog, other: &WireLog, word: &str) -> Check {
    Check::new(
        format!(
            "the {}'s wire log holds no {} query (\"{word}\")",
            log.server, other.server
        ),
        match (other.mentions(word), log.mentions(word)) {
            (true, false) => Ok(format!("the {} server received it", other.server)),
            (false, _) => Err(format!("the {} server never received it", other.server)),
            (true, true) => Err(format!("the {} server received it too", log.server)),
        },
    )
}

/// Each tool result in the conversation: the model's tool name, the text, whether an error.
fn tool_results(conversation: &[Message]) -> impl Iterator<Item = (&str, &str, bool)> {
    conversation.iter().filter_map(|m| match m {
        Message::ToolResult {
            name,
            text,
            is_error,
            ..
        } => Some((name.as_str(), text.as_str(), *is_error)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use junction_protocol::tools::Tool;
    use serde_json::json;

    fn names() -> ToolNames {
        let schema = json!({"type": "object", "properties": {"isbn": {"type": "string"}}, "required": ["isbn"]});
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        ToolNames::new([("library".to_owned(), Tool::new("checkout", schema))])
    }

    #[test]
    fn script_calls_must_name_offered_tools_with_fitting_arguments() {
        let good = r#"[{"toolCalls": [{"name": "library__checkout", "arguments": {"isbn": "1"}}]}, {"text": "ok"}]"#;
        assert_eq!(script_problems(good, &names()), Ok("1 calls".to_owned()));
        let bad = r#"{"turns": [{"toolCalls": [{"name": "library__checkout", "arguments": {"isbn": 1}}, {"name": "library__burn"}]}]}"#;
        let problems = script_problems(bad, &names()).unwrap_err();
        assert!(problems.contains("`library__checkout`"), "{problems}");
        assert!(
            problems.contains("no server offers `library__burn`"),
            "{problems}"
        );
    }

    #[test]
    fn a_check_prints_pass_with_its_finding_or_fail_with_the_reason() {
        let style = Style::plain();
        assert_eq!(Check::new("x", Ok(String::new())).line(style), "PASS  x");
        assert_eq!(
            Check::new("x", Ok("3 calls".into())).line(style),
            "PASS  x (3 calls)"
        );
        assert_eq!(Check::new("x", Err("no".into())).line(style), "FAIL  x: no");
    }

    #[test]
    fn isolation_needs_the_query_on_its_own_server_and_nowhere_else() {
        let log = |server, text: &str| WireLog {
            server,
            text: Ok(text.to_owned()),
        };
        let calendar = log("calendar", r#"{"params":{"arguments":{"text":"Dentist"}}}"#);
        assert!(isolated(&log("library", "{}"), &calendar, "dentist").passed);
        assert!(!isolated(&log("library", "dentist"), &calendar, "dentist").passed);
        assert!(!isolated(&log("library", "{}"), &log("calendar", "{}"), "dentist").passed);
        assert_eq!(
            isolated(&log("library", "{}"), &calendar, "dentist").name,
            "the library's wire log holds no calendar query (\"dentist\")"
        );
    }
}
