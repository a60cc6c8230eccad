//! The server's requests run as tasks by the client (2025-11-25, `basic/utilities/tasks`):
//! a `sampling/createMessage` or `elicitation/create` whose params carry `task` is answered
//! at once with a `CreateTaskResult`, while the host's handler (a person who may take
//! minutes to answer) runs on.
//!
//! Set with [`ClientOptions::task_requests`](super::ClientOptions::task_requests), which
//! declares `tasks.list`, `tasks.cancel` and `tasks.requests.sampling.createMessage` /
//! `tasks.requests.elicitation.create` for the handlers set. The server then follows the
//! task with `tasks/get`, `tasks/result` (which blocks until the task is terminal, then
//! answers exactly what the plain request would have, with the related-task `_meta`),
//! `tasks/list`, and `tasks/cancel`, which stops the handler (its future is dropped and its
//! context's token fires). A request without `task` is answered as before.
//!
//! The tasks are kept by the server framework's task machinery ([`crate::server::task`]):
//! ids are 128 random bits, a task lives for its ttl (clamped to the settings'
//! [`TaskSettings::max_ttl`]), status changes are sent as `notifications/tasks/status`. The
//! one session of the client owns them all; when it ends, the handlers still running stop.

use std::sync::Arc;

use junction_protocol::capabilities::TasksCapability;
use junction_protocol::elicitation::Elicit;
use junction_protocol::jsonrpc;
use junction_protocol::meta::{PaginatedParams, TaskMetadata};
use junction_protocol::method::Request;
use junction_protocol::sampling::CreateMessage;
use junction_protocol::tasks::{
    CancelTask, CreateTaskResult, GetTask, GetTaskPayload, ListTasks, TaskResult, TaskStatus,
};
use junction_protocol::ErrorObject;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::service::{decode, encode, Handlers};
use crate::server::task::{MemoryStore, TaskOutcome, TaskSettings, Tasks};
use crate::session::RequestContext;

/// Who owns the tasks: the client has one session, whose server sees them all.
const OWNER: &str = "server";

/// How many tasks `tasks/list` answers in one page.
const PAGE_SIZE: usize = 100;

/// The tasks the client runs for its server.
pub(super) struct TaskReceiver {
    tasks: Arc<Tasks>,
}

impl TaskReceiver {
    /// Runs requests as tasks with `settings`, kept in memory.
    pub(super) fn new(settings: TaskSettings) -> Self {
        TaskReceiver {
            tasks: Arc::new(Tasks::new(settings, Arc::new(MemoryStore::default()))),
        }
    }

    /// The `tasks` capability of a client with `handlers`.
    pub(super) fn capability(sampling: bool, elicitation: bool) -> TasksCapability {
        let mut capability = TasksCapability::default().with_list().with_cancel();
        if sampling {
            capability = capability.with_sampling_requests();
        }
        if elicitation {
            capability = capability.with_elicitation_requests();
        }
        // `requests` is declared even when it is empty: this client takes task methods.
        capability.requests.get_or_insert_with(Default::default);
        capability
    }

    /// Answers `method` when it is a task method, or a task-augmented request the
    /// `handlers` serve; `None` for every other request, answered as usual.
    pub(super) async fn answer(
        &self,
        handlers: &Arc<Handlers>,
        method: &str,
        params: Option<&RawValue>,
        context: &RequestContext,
    ) -> Option<Result<Box<RawValue>, ErrorObject>> {
        let answer = match method {
            GetTask::METHOD => self.get(params),
            GetTaskPayload::METHOD => self.payload(params, context).await,
            ListTasks::METHOD => self.list(params).await,
            CancelTask::METHOD => self.cancel(params).await,
            CreateMessage::METHOD if handlers.sampling.is_some() => {
                self.start(handlers, method, params?, context)?
            }
            Elicit::METHOD if handlers.elicitation.is_some() => {
                self.start(handlers, method, params?, context)?
            }
            _ => return None,
        };
        Some(answer)
    }

    /// A request whose params carry `task`: creates the task, runs the handler on in its own
    /// tokio task, and answers the task's handle; `None` for a request without `task`.
    fn start(
        &self,
        handlers: &Arc<Handlers>,
        method: &str,
        params: &RawValue,
        context: &RequestContext,
    ) -> Option<Result<Box<RawValue>, ErrorObject>> {
        #[derive(serde::Deserialize)]
        struct Augmented {
            task: Option<TaskMetadata>,
        }
        let task = serde_json::from_str::<Augmented>(params.get()).ok()?.task?;
        if let Err(e) = handlers.check(method, Some(params)) {
            return Some(Err(e));
        }
        let peer = context.peer().clone();
        let cancel = CancellationToken::new();
        let created =
            self.tasks
                .create(OWNER, method, task.ttl, cancel.clone(), Some(peer.clone()));
        let record = match created {
            Ok(record) => record,
            Err(e) => return Some(Err(e)),
        };
        let id = record.id().to_owned();
        let handler_context = RequestContext::new(
            context.id().clone(),
            context.progress_token().cloned(),
            cancel.clone(),
            peer.clone(),
        );
        let tasks = self.tasks.clone();
        let handlers = handlers.clone();
        let method = method.to_owned();
        let params = params.to_owned();
        tracing::debug!(task = %id, %method, "the server's request runs as a task");
        tokio::spawn(async move {
            let answer = tokio::select! {
                answer = handlers.answer(&method, Some(&params), handler_context) => answer,
                () = cancel.cancelled() => return,
                () = peer.closed() => {
                    cancel.cancel();
                    let error = ErrorObject::internal("The session that created the task ended");
                    tasks.finish(&id, TaskStatus::Failed, TaskOutcome::Error(error));
                    return;
                }
            };
            let (status, outcome) = match answer.and_then(|raw| {
                serde_json::from_str::<Map<String, Value>>(raw.get()).map_err(|e| {
                    ErrorObject::internal(format!("could not read the handler's result: {e}"))
                })
            }) {
                Ok(result) => (TaskStatus::Completed, TaskOutcome::Result(result)),
                Err(error) => (TaskStatus::Failed, TaskOutcome::Error(error)),
            };
            tasks.finish(&id, status, outcome);
        });
        Some(
            jsonrpc::to_raw(&CreateTaskResult::new(record.task)).map_err(|e| {
                ErrorObject::internal(format!("could not encode the task's handle: {e}"))
            }),
        )
    }

    fn get(&self, params: Option<&RawValue>) -> Result<Box<RawValue>, ErrorObject> {
        let p = decode::<GetTask>(params)?;
        let record = self.tasks.get(OWNER, &p.task_id)?;
        encode::<GetTask>(&TaskResult::from(record.task))
    }

    async fn payload(
        &self,
        params: Option<&RawValue>,
        context: &RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let p = decode::<GetTaskPayload>(params)?;
        let payload = self.tasks.payload(OWNER, &p.task_id, context.id()).await?;
        encode::<GetTaskPayload>(&payload)
    }

    async fn list(&self, params: Option<&RawValue>) -> Result<Box<RawValue>, ErrorObject> {
        let p: PaginatedParams = decode::<ListTasks>(params)?;
        let page = self
            .tasks
            .list(OWNER, p.cursor.as_deref(), PAGE_SIZE)
            .await?;
        encode::<ListTasks>(&page)
    }

    async fn cancel(&self, params: Option<&RawValue>) -> Result<Box<RawValue>, ErrorObject> {
        let p = decode::<CancelTask>(params)?;
        let task = self
            .tasks
            .cancel(OWNER, &p.task_id)
            .await?
            .task(&p.task_id)?;
        encode::<CancelTask>(&TaskResult::from(task))
    }
}
