//! Tasks left running: tool calls a server runs as tasks outlive the chat that made them.
//!
//! While the host follows a call that became a task, the task is written down in a
//! [`TaskLedger`] (by default `tasks.json` in the user's config directory, see
//! [`default_tasks_file`]); it is struck out when the call ends, whether with a result, an
//! error or an interruption (which cancels the task). A chat that ends in the middle of the
//! call (the terminal closed, SIGTERM) leaves the entry, and the next start lists it:
//! [`Host::left_tasks`], [`Host::check_left_task`] asks its server where it stands,
//! [`Host::collect_left_task`] puts its result into the conversation, as an attached
//! resource is; [`Host::cancel_left_task`] and [`Host::forget_left_task`] drop it.
//!
//! Whether a server still knows a task a new session asks about is the server's to say: a
//! 2026-07-28 server's tasks (and those of a server that binds tasks to the user's identity)
//! can be collected from a new session; a 2025-11-25 server that binds tasks to its session
//! answers that it knows no such task, and the entry is forgotten.
//!
//! The file is read and written whole at each change, so two chats running at once keep
//! each other's entries (the last of two writes at the same instant wins).

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use junction::client::ToolTask;
use junction::RequestError;
use junction_protocol::error::ErrorCode;
use junction_protocol::tasks::TaskStatus;
use serde::{Deserialize, Serialize};

use crate::agent::{Host, HostError};
use crate::conversation::{result_media, result_text};
use crate::state_file::{self, StateFileError};

/// What the file holds, as errors name it.
const WHAT: &str = "tasks left running";

/// Where tasks left running are kept unless told otherwise:
/// `$XDG_CONFIG_HOME/junction/tasks.json`, else `$HOME/.config/junction/tasks.json`; `None`
/// when neither variable is set.
pub fn default_tasks_file() -> Option<PathBuf> {
    crate::config::scopes::user_config_dir().map(|dir| dir.join("tasks.json"))
}

/// A tool call running as a task on a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeftTask {
    /// The server, by its config name.
    pub server: String,
    /// The tool, by the server's name for it.
    pub tool: String,
    /// The server's id for the task.
    pub task_id: String,
    /// When the call started, in seconds since the Unix epoch.
    pub started: u64,
}

impl LeftTask {
    /// The task of `tool` on `server` with id `task_id`, started now.
    pub fn new(server: &str, tool: &str, task_id: &str) -> LeftTask {
        LeftTask {
            server: server.to_owned(),
            tool: tool.to_owned(),
            task_id: task_id.to_owned(),
            started: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }

    fn is(&self, server: &str, task_id: &str) -> bool {
        self.server == server && self.task_id == task_id
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct File {
    #[serde(default)]
    tasks: Vec<LeftTask>,
}

/// The tasks this host follows now, and those earlier runs left, in a file or in memory.
#[derive(Debug)]
pub struct TaskLedger {
    /// `None`: kept in `memory` only (tests, embedded hosts).
    path: Option<PathBuf>,
    memory: Mutex<File>,
    /// The entries this host follows now (server, task id): not "left".
    following: Mutex<Vec<(String, String)>>,
}

impl Default for TaskLedger {
    fn default() -> Self {
        TaskLedger::in_memory()
    }
}

impl TaskLedger {
    /// A ledger kept in `path`.
    pub fn in_file(path: impl Into<PathBuf>) -> TaskLedger {
        TaskLedger {
            path: Some(path.into()),
            ..TaskLedger::in_memory()
        }
    }

    /// A ledger that lives as long as the host.
    pub fn in_memory() -> TaskLedger {
        TaskLedger {
            path: None,
            memory: Mutex::default(),
            following: Mutex::default(),
        }
    }

    /// Changes the entries with `change`, reading the file first and writing it after, with
    /// no other change in between: another run's ([`state_file::update`] locks the file) or
    /// this one's (the memory lock is held throughout).
    fn change(&self, change: impl FnOnce(&mut Vec<LeftTask>)) -> Result<(), StateFileError> {
        let mut memory = self.memory.lock().unwrap_or_else(PoisonError::into_inner);
        match &self.path {
            Some(path) => state_file::update(path, WHAT, |file: &mut File| change(&mut file.tasks)),
            None => {
                change(&mut memory.tasks);
                Ok(())
            }
        }
    }

    /// Writes down `task`, which this host now follows.
    pub fn follow(&self, task: LeftTask) -> Result<(), StateFileError> {
        self.following
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((task.server.clone(), task.task_id.clone()));
        self.change(|tasks| {
            tasks.retain(|t| !t.is(&task.server, &task.task_id));
            tasks.push(task);
        })
    }

    /// Strikes out the task `task_id` of `server`: it ended, or nobody wants it any more.
    pub fn forget(&self, server: &str, task_id: &str) -> Result<(), StateFileError> {
        self.following
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(s, t)| !(s == server && t == task_id));
        self.change(|tasks| tasks.retain(|t| !t.is(server, task_id)))
    }

    /// The tasks written down and not followed by this host: those earlier runs left.
    pub fn left(&self) -> Result<Vec<LeftTask>, StateFileError> {
        let tasks = match &self.path {
            Some(path) => state_file::load::<File>(path, WHAT)?.tasks,
            None => self
                .memory
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .tasks
                .clone(),
        };
        let following = self
            .following
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Ok(tasks
            .into_iter()
            .filter(|t| !following.iter().any(|(s, id)| t.is(s, id)))
            .collect())
    }
}

/// Where a task left running stands ([`Host::check_left_task`]).
#[derive(Debug)]
pub enum LeftTaskState {
    /// Still running on its server.
    Running {
        /// `working` or `input_required`.
        status: TaskStatus,
        /// What the server last said it is doing.
        message: Option<String>,
    },
    /// Ended; [`Host::collect_left_task`] attaches what it ended with.
    Ended {
        /// Whether it ended with an error (a failed tool, a failed or cancelled task).
        failed: bool,
    },
    /// Its server is not connected, or could not be asked.
    Unreachable(String),
    /// Its server knows no such task (tasks bound to an earlier session, or expired); the
    /// entry has been forgotten.
    Gone,
}

/// Whether `error` is a server saying it knows no such task (-32602, as the specification
/// says for an unknown task id).
fn unknown_task(error: &RequestError) -> bool {
    matches!(error, RequestError::Remote { error, .. } if error.code == ErrorCode::INVALID_PARAMS)
}

impl Host {
    /// The tasks earlier runs left running (see the [module docs](self)).
    pub fn left_tasks(&self) -> Result<Vec<LeftTask>, HostError> {
        Ok(self.tasks.left()?)
    }

    /// The task left running whose id is `id` or starts with it (at least 4 characters).
    fn left_task(&self, id: &str) -> Result<LeftTask, HostError> {
        let matching: Vec<LeftTask> = self
            .left_tasks()?
            .into_iter()
            .filter(|t| id.len() >= 4 && t.task_id.starts_with(id))
            .collect();
        match <[LeftTask; 1]>::try_from(matching) {
            Ok([task]) => Ok(task),
            Err(matching) if matching.is_empty() => Err(HostError::UnknownTask(id.to_owned())),
            Err(_) => Err(HostError::AmbiguousTask(id.to_owned())),
        }
    }

    /// Asks the server of `task` where it stands; a task the server no longer knows is
    /// forgotten.
    pub async fn check_left_task(&self, task: &LeftTask) -> LeftTaskState {
        let Ok(server) = self.server(&task.server) else {
            return LeftTaskState::Unreachable(format!(
                "server `{}` is not connected",
                task.server
            ));
        };
        match server.client.tool_task(&task.task_id).await {
            Ok(ToolTask::Running { status, message }) => LeftTaskState::Running { status, message },
            Ok(ToolTask::Ended(ended)) => LeftTaskState::Ended {
                failed: !ended.is_ok_and(|r| !r.failed()),
            },
            Err(e) if unknown_task(&e) => match self.tasks.forget(&task.server, &task.task_id) {
                Ok(()) => LeftTaskState::Gone,
                Err(e) => LeftTaskState::Unreachable(e.to_string()),
            },
            Err(e) => LeftTaskState::Unreachable(e.to_string()),
        }
    }

    /// Puts what the task left running `id` (or an unambiguous start of it) ended with into
    /// the conversation, as a context message the model reads with the next message, and
    /// forgets the task. A task still running is left as it is: the error says so.
    pub async fn collect_left_task(&mut self, id: &str) -> Result<LeftTask, HostError> {
        let task = self.left_task(id)?;
        let server = self.server(&task.server)?;
        let request = |source| HostError::Request {
            server: task.server.clone(),
            source,
        };
        let (text, media) = match server.client.tool_task(&task.task_id).await {
            Ok(ToolTask::Ended(Ok(result))) => {
                let said = if result.failed() {
                    "failed"
                } else {
                    "answered"
                };
                (
                    format!("{said}:\n{}", result_text(&result)),
                    result_media(&result),
                )
            }
            Ok(ToolTask::Ended(Err(e))) => (format!("ended without a result: {e}"), Vec::new()),
            Ok(ToolTask::Running { status, message }) => {
                return Err(HostError::TaskRunning {
                    task_id: task.task_id,
                    status,
                    message,
                })
            }
            Err(e) if unknown_task(&e) => {
                self.tasks.forget(&task.server, &task.task_id)?;
                return Err(request(e));
            }
            Err(e) => return Err(request(e)),
        };
        let source = format!("task {} of {}__{}", task.task_id, task.server, task.tool);
        let text = format!(
            "The call of `{}__{}` left running in an earlier chat {text}",
            task.server, task.tool
        );
        self.add_context(source, text, media);
        self.tasks.forget(&task.server, &task.task_id)?;
        Ok(task)
    }

    /// Cancels the task left running `id` on its server (`tasks/cancel`) and forgets it.
    pub async fn cancel_left_task(&self, id: &str) -> Result<LeftTask, HostError> {
        let task = self.left_task(id)?;
        let server = self.server(&task.server)?;
        match server.client.cancel_tool_task(&task.task_id).await {
            Ok(()) => {}
            Err(e) if unknown_task(&e) => {}
            Err(source) => {
                return Err(HostError::Request {
                    server: task.server,
                    source,
                })
            }
        }
        self.tasks.forget(&task.server, &task.task_id)?;
        Ok(task)
    }

    /// Forgets the task left running `id` without asking its server.
    pub fn forget_left_task(&self, id: &str) -> Result<LeftTask, HostError> {
        let task = self.left_task(id)?;
        self.tasks.forget(&task.server, &task.task_id)?;
        Ok(task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_followed_task_is_not_left_until_another_ledger_reads_the_file() {
        let dir = std::env::temp_dir().join(format!("junction-tasks-left-{}", std::process::id()));
        let path = dir.join("tasks.json");
        let first = TaskLedger::in_file(&path);
        first
            .follow(LeftTask::new("library", "report", "t1"))
            .unwrap();
        first
            .follow(LeftTask::new("library", "report", "t2"))
            .unwrap();
        assert!(
            first.left().unwrap().is_empty(),
            "its own tasks are not left"
        );
        first.forget("library", "t1").unwrap();

        // The next run reads what the first one left: t2 only.
        let next = TaskLedger::in_file(&path);
        let left = next.left().unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(
            (left[0].server.as_str(), left[0].task_id.as_str()),
            ("library", "t2")
        );
        // A second chat writing its own entry keeps the other's.
        next.follow(LeftTask::new("calendar", "sync", "t3"))
            .unwrap();
        let both = TaskLedger::in_file(&path).left().unwrap();
        assert_eq!(both.len(), 2, "{both:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
