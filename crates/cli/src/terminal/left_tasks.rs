//! `/tasks`: the tool calls an earlier chat left running as tasks on their servers (see
//! [`junction_host::tasks_left`]), and what to do with them.

use std::time::{SystemTime, UNIX_EPOCH};

use junction_host::display;
use junction_host::tasks_left::{LeftTask, LeftTaskState};
use junction_host::Host;

/// What `/tasks` takes.
const USAGE: &str =
    "usage: /tasks, or /tasks collect|cancel|forget ID (the start of an id will do)";

/// The line said at start when earlier chats left tasks running, if they did.
pub fn at_start(host: &Host) -> Option<String> {
    match host.left_tasks() {
        Ok(left) if left.is_empty() => None,
        Ok(left) => Some(format!(
            "{} tool call{} left running by an earlier chat; /tasks lists {}",
            left.len(),
            if left.len() == 1 { " was" } else { "s were" },
            if left.len() == 1 { "it" } else { "them" },
        )),
        Err(e) => Some(format!("warning: {}", display::line(&e.to_string()))),
    }
}

/// How long ago `started` (seconds since the epoch) was, roughly.
fn ago(started: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    match now.saturating_sub(started) {
        s if s < 120 => format!("{s} s ago"),
        s if s < 7_200 => format!("{} min ago", s / 60),
        s if s < 172_800 => format!("{} h ago", s / 3_600),
        s => format!("{} days ago", s / 86_400),
    }
}

/// One task's line: the tool, the id, when, and where it stands.
fn line(task: &LeftTask, state: &LeftTaskState) -> String {
    let state = match state {
        LeftTaskState::Running { status, message } => format!(
            "still {status}{}",
            message
                .as_deref()
                .map(|m| format!(": {}", display::line(m)))
                .unwrap_or_default()
        ),
        LeftTaskState::Ended { failed: false } => "done; /tasks collect adds its result".to_owned(),
        LeftTaskState::Ended { failed: true } => {
            "ended with an error; /tasks collect adds it".to_owned()
        }
        LeftTaskState::Unreachable(why) => format!("unknown now: {}", display::line(why)),
        LeftTaskState::Gone => "its server no longer knows it; forgotten".to_owned(),
    };
    format!(
        "  {}__{}  task {}  started {}  {state}",
        display::name(&task.server),
        display::name(&task.tool),
        display::name(&task.task_id),
        ago(task.started),
    )
}

/// Does what `/tasks REST` asks.
pub async fn command(host: &mut Host, rest: &str) -> Vec<String> {
    let mut words = rest.split_whitespace();
    let (verb, id) = (words.next(), words.next());
    if words.next().is_some() {
        return vec![USAGE.to_owned()];
    }
    let done = match (verb, id) {
        (None, _) => return list(host).await,
        (Some("collect"), Some(id)) => host.collect_left_task(id).await.map(|t| {
            format!(
                "+ the result of {}__{} is in the conversation; the model reads it with your next message",
                display::name(&t.server),
                display::name(&t.tool)
            )
        }),
        (Some("cancel"), Some(id)) => host
            .cancel_left_task(id)
            .await
            .map(|t| format!("cancelled task {}", display::name(&t.task_id))),
        (Some("forget"), Some(id)) => host
            .forget_left_task(id)
            .map(|t| format!("forgot task {}", display::name(&t.task_id))),
        _ => return vec![USAGE.to_owned()],
    };
    vec![match done {
        Ok(said) => said,
        Err(e) => format!("error: {}", display::line(&e.to_string())),
    }]
}

/// Each task left running, with its server's word on where it stands.
async fn list(host: &Host) -> Vec<String> {
    let left = match host.left_tasks() {
        Ok(left) => left,
        Err(e) => return vec![format!("error: {}", display::line(&e.to_string()))],
    };
    if left.is_empty() {
        return vec!["no tool call was left running by an earlier chat".to_owned()];
    }
    let mut lines = vec!["tool calls left running by an earlier chat:".to_owned()];
    for task in &left {
        let state = host.check_left_task(task).await;
        lines.push(line(task, &state));
    }
    lines
}
