//! One tool call on its server: with a progress token, a timeout that only counts silence,
//! and cancellation.
//!
//! Every call carries `_meta.progressToken`; each `notifications/progress` for it becomes an
//! [`Event::ToolProgress`] and restarts the call's timeout. The timeout never runs while
//! the user is answering a question of that server (an elicitation, a sampling approval),
//! and restarts when the answer is given: a 13-field form filled in slowly does not kill
//! the call it belongs to. A call that stays silent for the whole timeout is cancelled on
//! its server (`notifications/cancelled`) and fails with [`CallFailure::TimedOut`].

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use junction::session::{ProgressUpdate, RequestOptions};
use junction::RequestError;
use junction_protocol::tools::{CallToolParams, CallToolResult};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::events::{Event, EventSink};
use crate::servers::ConnectedServer;

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

/// Calls `params` on `server`; progress is reported as events for `call_id`.
pub(crate) async fn call(
    server: &ConnectedServer,
    params: CallToolParams,
    timeout: Duration,
    interrupt: &CancellationToken,
    events: &EventSink,
    call_id: &str,
) -> Result<CallToolResult, CallFailure> {
    let activity = Arc::new(Mutex::new(Instant::now()));
    let progress = {
        let activity = activity.clone();
        let events = events.clone();
        let call_id = call_id.to_owned();
        Arc::new(move |update: ProgressUpdate| {
            *activity.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
            events.emit(Event::ToolProgress {
                call_id: call_id.clone(),
                progress: update.progress,
                total: update.total,
                message: update.message,
            });
        })
    };
    let options = RequestOptions {
        timeout: Some(SESSION_LIMIT),
        progress: Some(progress),
        cancel: Some(interrupt.clone()),
        ..RequestOptions::default()
    };
    // A tool that must run as a task (2025-11-25) is called as one and waited for; on
    // 2026-07-28 the server decides and the client follows the task it gets.
    let on_status = {
        let activity = activity.clone();
        move |_: &junction::protocol::tasks::Task| {
            *activity.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        }
    };
    tokio::select! {
        result = server.client.call_tool_auto(params, options, on_status) => match result {
            Ok(result) => Ok(result),
            Err(_) if interrupt.is_cancelled() => Err(CallFailure::Interrupted),
            Err(e) => Err(CallFailure::Failed(e)),
        },
        // Dropping the call sends `notifications/cancelled` to the server.
        () = silence(timeout, &activity, server.attention.watch()) => Err(CallFailure::TimedOut(timeout)),
    }
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
