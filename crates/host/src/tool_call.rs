//! One tool call on its server: with a progress token, a timeout that only counts silence,
//! and cancellation.
//!
//! Every call carries `_meta.progressToken`; each `notifications/progress` for it becomes an
//! [`Event::ToolProgress`] and restarts the call's timeout. The timeout never runs while
//! the user is answering a question of that server (an elicitation, a sampling approval),
//! and restarts when the answer is given: a 13-field form filled in slowly does not kill
//! the call it belongs to. A call that stays silent for the whole timeout is cancelled on
//! its server (`notifications/cancelled`) and fails with [`CallFailure::TimedOut`].
//!
//! A tool whose `execution.taskSupport` is `required` runs as a task (2025-11-25), and so
//! does an `optional` one once a call of it took the server's `taskAfterMs` (`SlowTools`);
//! each status of the task becomes an [`Event::TaskStatus`], and an interruption cancels it
//! (`tasks/cancel`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use junction::session::{
    ProgressSink, ProgressUpdate, RequestOptions, TaskStatusSink, TaskStatusUpdate,
};
use junction::RequestError;
use junction_protocol::tools::{CallToolParams, CallToolResult};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::events::{Event, EventSink};
use crate::servers::ConnectedServer;
use crate::tasks_left::{LeftTask, TaskLedger};

/// How long a tool call may stay silent (no answer, no progress) unless told otherwise.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(600);

/// The library's own limit, set far beyond any timeout here: the watchdog decides.
const SESSION_LIMIT: Duration = Duration::from_secs(7 * 24 * 3600);

/// Why a call gave no result.
#[derive(Debug, thiserror::Error)]
pub enum CallFailure {
    /// It stayed silent for its whole timeout.
    #[error("the server sent neither an answer nor progress for {} s, so the call was cancelled", .0.as_secs())]
    TimedOut(Duration),
    /// The turn was interrupted.
    #[error("the user interrupted the call")]
    Interrupted,
    /// The request failed.
    #[error(transparent)]
    Failed(RequestError),
}

/// Which `optional` tools of one server run as tasks: all of them when its threshold is
/// zero, otherwise each one from the first call that took at least the threshold on.
#[derive(Debug, Default)]
pub(crate) struct SlowTools {
    after: Option<Duration>,
    slow: Mutex<HashMap<String, bool>>,
}

impl SlowTools {
    pub(crate) fn new(after: Option<Duration>) -> Self {
        SlowTools {
            after,
            slow: Mutex::default(),
        }
    }

    /// Whether `tool`, if `optional`, should run as a task.
    fn prefer_task(&self, tool: &str) -> bool {
        match self.after {
            None => false,
            Some(after) if after.is_zero() => true,
            Some(_) => self
                .slow
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(tool)
                .copied()
                .unwrap_or(false),
        }
    }

    /// Notes that a call of `tool` took `took`.
    fn took(&self, tool: &str, took: Duration) {
        if self.after.is_some_and(|after| took >= after) {
            self.slow
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(tool.to_owned(), true);
        }
    }
}

/// Calls `params` on `server`; progress is reported as events for `call_id`.
pub(crate) async fn call(
    server: &ConnectedServer,
    params: CallToolParams,
    timeout: Duration,
    interrupt: &CancellationToken,
    events: &EventSink,
    call_id: &str,
    tasks: &Arc<TaskLedger>,
) -> Result<CallToolResult, CallFailure> {
    let activity = Arc::new(Mutex::new(Instant::now()));
    let id = call_id.to_owned();
    let progress: ProgressSink = reporting(&activity, events, move |update: ProgressUpdate| {
        Event::ToolProgress {
            call_id: id.clone(),
            progress: update.progress,
            total: update.total,
            message: update.message,
        }
    });
    // A tool that must run as a task (2025-11-25), or an optional one found slow, is called
    // as one and waited for; on 2026-07-28 the server decides and the client follows the
    // task it gets. Either way each status of the task is shown and counts as activity.
    let id = call_id.to_owned();
    // The call's task is written down while it runs: a chat that ends before it does
    // leaves it for the next one to collect.
    let followed: Arc<Mutex<Option<String>>> = Arc::default();
    let follow = {
        let (tasks, followed) = (tasks.clone(), followed.clone());
        let (server, tool) = (server.name.clone(), params.name.clone());
        move |task_id: &str| {
            let mut followed = followed.lock().unwrap_or_else(PoisonError::into_inner);
            if followed.is_none() {
                if let Err(e) = tasks.follow(LeftTask::new(&server, &tool, task_id)) {
                    tracing::warn!("the task of {server}__{tool} is not written down: {e}");
                }
                *followed = Some(task_id.to_owned());
            }
        }
    };
    let task_status: TaskStatusSink =
        reporting(&activity, events, move |update: TaskStatusUpdate| {
            follow(&update.task_id);
            Event::TaskStatus {
                call_id: id.clone(),
                task_id: update.task_id,
                status: update.status,
                message: update.message,
            }
        });
    let on_status = {
        let task_status = task_status.clone();
        move |task: &junction::protocol::tasks::Task| {
            task_status(TaskStatusUpdate {
                task_id: task.task_id.clone(),
                status: task.status,
                message: task.status_message.clone(),
            })
        }
    };
    let options = RequestOptions {
        timeout: Some(SESSION_LIMIT),
        progress: Some(progress),
        cancel: Some(interrupt.clone()),
        task_status: Some(task_status),
        ..RequestOptions::default()
    };
    let tool = params.name.clone();
    let prefer_task = server.slow_tools.prefer_task(&tool);
    let started = Instant::now();
    let call = server
        .client
        .call_tool_preferring_task(params, prefer_task, options, on_status);
    let ended = tokio::select! {
        result = call => match result {
            Ok(result) => {
                server.slow_tools.took(&tool, started.elapsed());
                Ok(result)
            }
            Err(_) if interrupt.is_cancelled() => Err(CallFailure::Interrupted),
            Err(e) => Err(CallFailure::Failed(e)),
        },
        // Dropping the call sends `notifications/cancelled` to the server.
        () = silence(timeout, &activity, server.attention.watch()) => Err(CallFailure::TimedOut(timeout)),
    };
    let task = followed
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(task_id) = task {
        if let Err(e) = tasks.forget(&server.name, &task_id) {
            tracing::warn!(
                "the ended task of {}__{tool} stays written down: {e}",
                server.name
            );
        }
    }
    ended
}

/// A sink for the updates of a call: each one counts as activity and becomes the event
/// `event` makes of it.
fn reporting<T: 'static>(
    activity: &Arc<Mutex<Instant>>,
    events: &EventSink,
    event: impl Fn(T) -> Event + Send + Sync + 'static,
) -> Arc<dyn Fn(T) + Send + Sync> {
    let activity = activity.clone();
    let events = events.clone();
    Arc::new(move |update| {
        *activity.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        events.emit(event(update));
    })
}

/// Returns once `limit` has passed since the last progress (or the last answer the user
/// gave the server) with no question of the server open.
async fn silence(
    limit: Duration,
    activity: &Mutex<Instant>,
    mut attention: watch::Receiver<(usize, Instant)>,
) {
    let mut watching = true;
    loop {
        let (open, answered) = *attention.borrow_and_update();
        if open > 0 && watching {
            watching = attention.changed().await.is_ok();
            continue;
        }
        let progressed = *activity.lock().unwrap_or_else(PoisonError::into_inner);
        let deadline = progressed.max(answered) + limit;
        if Instant::now() >= deadline {
            return;
        }
        if watching {
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => {}
                changed = attention.changed() => watching = changed.is_ok(),
            }
        } else {
            tokio::time::sleep_until(deadline).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_tools_run_as_tasks_once_found_slow_or_always_at_zero() {
        let never = SlowTools::new(None);
        never.took("report", Duration::from_secs(3600));
        assert!(!never.prefer_task("report"));

        let always = SlowTools::new(Some(Duration::ZERO));
        assert!(always.prefer_task("report"));

        let slow = SlowTools::new(Some(Duration::from_secs(2)));
        assert!(!slow.prefer_task("report"));
        slow.took("report", Duration::from_secs(1));
        assert!(!slow.prefer_task("report"));
        slow.took("report", Duration::from_secs(2));
        assert!(slow.prefer_task("report"));
        assert!(!slow.prefer_task("search"));
    }

    #[tokio::test(start_paused = true)]
    async fn silence_waits_for_the_limit_after_the_last_progress() {
        let activity = Arc::new(Mutex::new(Instant::now()));
        let (tx, rx) = watch::channel((0, Instant::now()));
        let started = Instant::now();
        let bump = activity.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(8)).await;
            *bump.lock().unwrap() = Instant::now();
        });
        silence(Duration::from_secs(10), &activity, rx).await;
        // Paused time: the clock only moves as the timers say.
        assert_eq!(started.elapsed(), Duration::from_secs(18));
        drop(tx);
    }

    #[tokio::test(start_paused = true)]
    async fn silence_does_not_run_while_a_question_is_open() {
        let activity = Mutex::new(Instant::now());
        let (tx, rx) = watch::channel((1, Instant::now()));
        let started = Instant::now();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            tx.send_replace((0, Instant::now()));
            tokio::time::sleep(Duration::from_secs(3600)).await;
        });
        silence(Duration::from_secs(10), &activity, rx).await;
        assert_eq!(started.elapsed(), Duration::from_secs(70));
    }
}
