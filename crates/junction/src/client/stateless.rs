//! The client's half of the stateless family (2026-07-28): `_meta` on every request, the
//! `input_required` retry loop, and `subscriptions/listen`.
//!
//! Every typed method of [`Client`](super::Client) goes through [`Stateless::request`], so
//! that multi round-trip requests work the same for `tools/call`, `prompts/get`,
//! `resources/read` and the rest.
//!
//! With the tasks extension declared ([`ClientOptions::tasks`](super::ClientOptions::tasks)),
//! a request the server answers with a task's handle (`resultType: "task"`) is followed to
//! its end: `tasks/get` at the task's `pollIntervalMs` (bounded), its `inputRequests`
//! answered once each with the handlers through `tasks/update`, `tasks/cancel` when the
//! caller cancels; the caller gets the result the plain request would have had.

use std::time::Duration;

use junction_protocol::jsonrpc;
use junction_protocol::method::Request;
use junction_protocol::stateless::{
    Discover, DiscoverParams, DiscoverResult, InputRequest, InputRequiredResult, ResultType,
    StatelessMeta, SubscriptionFilter, SubscriptionsAcknowledgedParams, SubscriptionsListen,
};
use junction_protocol::task_extension::{DetailedTask, TASKS_EXTENSION};
use junction_protocol::tasks::TaskStatus;
use junction_protocol::{ErrorCode, ErrorObject, RequestId};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::cache::ResultCache;
use super::service::Handlers;
use crate::error::RequestError;
use crate::session::{Peer, RequestContext, RequestOptions, TaskStatusUpdate};
use crate::transport::TransportError;

/// How long to wait between polls of a task when the server suggests nothing, and the
/// bounds put on what it suggests (a server cannot make the client poll in a busy loop).
const DEFAULT_POLL: Duration = Duration::from_millis(500);
const MIN_POLL: Duration = Duration::from_millis(20);
const MAX_POLL: Duration = Duration::from_secs(30);

/// How long a `subscriptions/listen` request may stay open: it is meant to last as long as
/// the caller wants it, so only cancellation or the server ends it.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// What a client speaking 2026-07-28 keeps besides the session.
pub(super) struct Stateless {
    pub(super) meta: StatelessMeta,
    pub(super) max_rounds: usize,
    pub(super) handlers: Arc<Handlers>,
    pub(super) acks: tokio::sync::Mutex<mpsc::UnboundedReceiver<SubscriptionsAcknowledgedParams>>,
    pub(super) cache: Arc<ResultCache>,
}

impl std::fmt::Debug for Stateless {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stateless")
            .field("meta", &self.meta)
            .field("max_rounds", &self.max_rounds)
            .finish()
    }
}

/// The params of `R` as a JSON object with the version, capabilities, identity and log level
/// in `_meta` (other `_meta` keys kept).
pub(super) fn with_meta(
    method: &str,
    params: &impl serde::Serialize,
    meta: &StatelessMeta,
) -> Result<Map<String, Value>, RequestError> {
    let encode = |source| RequestError::Encode {
        method: method.to_owned(),
        source,
    };
    let mut object = match serde_json::to_value(params).map_err(encode)? {
        Value::Object(map) => map,
        Value::Null => Map::new(),
        other => {
            return Err(RequestError::Invalid {
                method: method.to_owned(),
                reason: format!("params must be an object, not {other}"),
            })
        }
    };
    let keys = match serde_json::to_value(meta).map_err(encode)? {
        Value::Object(keys) => keys,
        _ => Map::new(),
    };
    match object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()))
    {
        Value::Object(existing) => existing.extend(keys),
        slot => *slot = Value::Object(keys),
    }
    Ok(object)
}

/// Turns the two stateless error codes into errors that say what to do.
pub(super) fn explain(error: RequestError, version: &str) -> RequestError {
    let Some(remote) = error.remote() else {
        return error;
    };
    let method = match &error {
        RequestError::Remote { method, .. } => method.clone(),
        _ => return error,
    };
    if remote.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY {
        let required = remote
            .data
            .as_ref()
            .and_then(|d| d.get("requiredCapabilities"))
            .map_or_else(|| "(not named)".to_owned(), Value::to_string);
        return RequestError::NotSupported {
            method,
            reason: format!(
                "the server requires client capabilities this client did not declare: {required} ({})",
                remote.message
            ),
        };
    }
    if remote.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
        return RequestError::NotSupported {
            method,
            reason: format!(
                "the server does not accept protocol version {version}; it supports {}",
                supported_versions(remote)
                    .map_or_else(|| "(not listed)".to_owned(), |v| v.join(", "))
            ),
        };
    }
    error
}

/// The versions a `-32022` error lists.
pub(super) fn supported_versions(error: &ErrorObject) -> Option<Vec<String>> {
    let list = error.data.as_ref()?.get("supported")?;
    serde_json::from_value(list.clone()).ok()
}

/// How many times a request whose answer stream broke is sent again.
const REISSUES: usize = 1;

/// Sends a request and sends it again with a new id, as the revision says, when its answer
/// could not be had but a second try may get it: the answer's stream ended before the
/// response (2026-07-28 has no resumption; [`REISSUES`] times), or the server refused
/// `version` with `-32022` while listing that same version as supported (once: such a
/// contradiction comes from an instance of another revision behind the same address, as
/// during a rolling upgrade, and the next instance may serve it).
async fn reissuing(
    peer: &Peer,
    method: &str,
    raw: Box<RawValue>,
    options: &RequestOptions,
    version: &str,
) -> Result<Box<RawValue>, RequestError> {
    let mut reissued = 0;
    let mut refused = false;
    loop {
        match peer
            .request_raw(method, Some(raw.clone()), options.clone())
            .await
        {
            Err(RequestError::Transport {
                error: error @ TransportError::StreamEnded { .. },
                ..
            }) if reissued < REISSUES => {
                reissued += 1;
                tracing::info!(%method, %error, "sending the request again with a new id");
            }
            Err(RequestError::Remote { error, .. })
                if !refused && refuses_a_listed_version(&error, version) =>
            {
                refused = true;
                tracing::info!(
                    %method,
                    %version,
                    "the server refused a protocol version it lists as supported; sending the request again"
                );
            }
            outcome => return outcome,
        }
    }
}

/// Whether `error` is a `-32022` that lists `version`, the version it refused, as supported.
fn refuses_a_listed_version(error: &ErrorObject, version: &str) -> bool {
    error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        && supported_versions(error).is_some_and(|listed| listed.iter().any(|v| v == version))
}

impl Stateless {
    /// Sends `R` with the stateless `_meta`, answers `input_required` results with the
    /// handlers and retries with a new id, at most `max_rounds` times.
    pub(super) async fn request<R: Request>(
        &self,
        peer: &Peer,
        params: &R::Params,
        options: RequestOptions,
    ) -> Result<R::Result, RequestError> {
        let mut params = with_meta(R::METHOD, params, &self.meta)?;
        let decode = |source| RequestError::Decode {
            method: R::METHOD.to_owned(),
            source,
        };
        // Only the first round's answer is cacheable: later rounds depend on the inputs.
        let mut cache_key = R::INFO
            .cacheable
            .then(|| ResultCache::key(R::METHOD, &params));
        if let Some(cached) = cache_key.as_ref().and_then(|key| self.cache.get(key)) {
            return serde_json::from_str(cached.get()).map_err(decode);
        }
        for _round in 0..=self.max_rounds {
            let raw = jsonrpc::to_raw(&params).map_err(|source| RequestError::Encode {
                method: R::METHOD.to_owned(),
                source,
            })?;
            let result = reissuing(peer, R::METHOD, raw, &options, &self.meta.protocol_version)
                .await
                .map_err(|e| {
                    if cache_key.is_some() {
                        // A page that fails (a cursor the server forgot) spoils the others.
                        self.cache.forget_method(R::METHOD);
                    }
                    explain(e, &self.meta.protocol_version)
                })?;
            #[derive(serde::Deserialize)]
            struct Kind {
                #[serde(rename = "resultType")]
                result_type: Option<ResultType>,
                /// Read in the same pass, for the cache.
                #[serde(rename = "ttlMs")]
                ttl_ms: Option<Value>,
            }
            let kind: Kind = serde_json::from_str(result.get()).map_err(decode)?;
            match kind.result_type.unwrap_or_default() {
                ResultType::Complete => {
                    if let Some(key) = cache_key.take() {
                        self.cache.put(key, &params, &result, kind.ttl_ms.as_ref());
                    }
                    return serde_json::from_str(result.get()).map_err(decode);
                }
                ResultType::InputRequired => {
                    cache_key = None;
                    let asked: InputRequiredResult =
                        serde_json::from_str(result.get()).map_err(decode)?;
                    self.fulfil::<R>(peer, &asked, &options, &mut params)
                        .await?;
                }
                ResultType::Task if self.follows_tasks() => {
                    let handle: DetailedTask =
                        serde_json::from_str(result.get()).map_err(decode)?;
                    return self.follow::<R>(peer, handle, &options).await;
                }
                ResultType::Task => {
                    return Err(RequestError::Invalid {
                        method: R::METHOD.to_owned(),
                        reason: "the server answered with a task, but this client did not declare the tasks extension (ClientOptions::tasks)".to_owned(),
                    })
                }
                other => {
                    return Err(RequestError::Invalid {
                        method: R::METHOD.to_owned(),
                        reason: format!("unknown resultType {:?}", other.as_str()),
                    })
                }
            }
        }
        Err(RequestError::Invalid {
            method: R::METHOD.to_owned(),
            reason: format!(
                "the server still asked for input after {} rounds (the client's limit)",
                self.max_rounds
            ),
        })
    }

    /// Asks `server/discover`, leaving a server's error as it came (the caller may fall
    /// back on it).
    pub(super) async fn discover(&self, peer: &Peer) -> Result<DiscoverResult, RequestError> {
        let params = with_meta(Discover::METHOD, &DiscoverParams::default(), &self.meta)?;
        let raw = jsonrpc::to_raw(&params).map_err(|source| RequestError::Encode {
            method: Discover::METHOD.to_owned(),
            source,
        })?;
        let result = reissuing(
            peer,
            Discover::METHOD,
            raw,
            &RequestOptions::default(),
            &self.meta.protocol_version,
        )
        .await?;
        serde_json::from_str(result.get()).map_err(|source| RequestError::Decode {
            method: Discover::METHOD.to_owned(),
            source,
        })
    }

    /// Answers every input request and writes `inputResponses` and `requestState` into the
    /// params of the next round.
    async fn fulfil<R: Request>(
        &self,
        peer: &Peer,
        asked: &InputRequiredResult,
        options: &RequestOptions,
        params: &mut Map<String, Value>,
    ) -> Result<(), RequestError> {
        if asked.input_requests.is_none() && asked.request_state.is_none() {
            return Err(RequestError::Invalid {
                method: R::METHOD.to_owned(),
                reason: "an input_required result has neither inputRequests nor requestState"
                    .to_owned(),
            });
        }
        let responses = self
            .answer::<R>(peer, asked.input_requests.iter().flatten(), options)
            .await?;
        params.insert("inputResponses".to_owned(), Value::Object(responses));
        match &asked.request_state {
            Some(state) => params.insert("requestState".to_owned(), Value::String(state.clone())),
            None => params.remove("requestState"),
        };
        Ok(())
    }

    /// Answers each input request with the handlers: the `inputResponses` of the next
    /// round (or of a task's `tasks/update`).
    async fn answer<'a, R: Request>(
        &self,
        peer: &Peer,
        inputs: impl Iterator<Item = (&'a String, &'a InputRequest)>,
        options: &RequestOptions,
    ) -> Result<Map<String, Value>, RequestError> {
        let mut responses = Map::new();
        for (key, input) in inputs {
            // As the server wrote them: the order of a form's fields is kept.
            let input_params = input.params.clone().unwrap_or_else(jsonrpc::empty_object);
            let context = RequestContext::new(
                RequestId::String(key.clone()),
                None,
                options.cancel.clone().unwrap_or_default(),
                peer.clone(),
            );
            let answer = self
                .handlers
                .answer(&input.method, Some(&input_params), context)
                .await
                .map_err(|error| input_failed(R::METHOD, key, &input.method, error))?;
            let value: Value =
                serde_json::from_str(answer.get()).map_err(|source| RequestError::Decode {
                    method: input.method.clone(),
                    source,
                })?;
            responses.insert(key.clone(), value);
        }
        Ok(responses)
    }

    /// Whether requests declare the tasks extension.
    fn follows_tasks(&self) -> bool {
        self.meta
            .client_capabilities
            .extensions
            .as_ref()
            .is_some_and(|e| e.contains_key(TASKS_EXTENSION))
    }

    /// Sends a task method with the stateless `_meta`; its raw answer.
    async fn task_method(
        &self,
        peer: &Peer,
        method: &str,
        params: Value,
        options: &RequestOptions,
    ) -> Result<Box<RawValue>, RequestError> {
        let params = with_meta(method, &params, &self.meta)?;
        let raw = jsonrpc::to_raw(&params).map_err(|source| RequestError::Encode {
            method: method.to_owned(),
            source,
        })?;
        let options = RequestOptions {
            cancel: None,
            ..options.clone()
        };
        reissuing(peer, method, raw, &options, &self.meta.protocol_version)
            .await
            .map_err(|e| explain(e, &self.meta.protocol_version))
    }

    /// Follows the task `handle` of an `R` request until it ends: its result as `R`'s, its
    /// JSON-RPC error as the server's answer.
    async fn follow<R: Request>(
        &self,
        peer: &Peer,
        handle: DetailedTask,
        options: &RequestOptions,
    ) -> Result<R::Result, RequestError> {
        let id = handle.task_id.clone();
        let cancel = options.cancel.clone().unwrap_or_default();
        let mut answered = std::collections::HashSet::new();
        let mut task = handle;
        tracing::debug!(task = %id, method = R::METHOD, "the server runs the request as a task");
        let mut reported: Option<(TaskStatus, Option<String>)> = None;
        loop {
            if let Some(sink) = &options.task_status {
                let now = (task.status, task.status_message.clone());
                if reported.as_ref() != Some(&now) {
                    sink(TaskStatusUpdate {
                        task_id: id.clone(),
                        status: now.0,
                        message: now.1.clone(),
                    });
                    reported = Some(now);
                }
            }
            if let Some(ended) = ended::<R>(&mut task) {
                return ended;
            }
            if task.status == TaskStatus::InputRequired {
                // Each request once: a later poll may list it again until the answer lands.
                let inputs = task.input_requests.take().unwrap_or_default();
                let fresh = inputs.iter().filter(|(key, _)| !answered.contains(*key));
                let responses = self.answer::<R>(peer, fresh, options).await?;
                if !responses.is_empty() {
                    answered.extend(responses.keys().cloned());
                    let update = serde_json::json!({"taskId": id, "inputResponses": responses});
                    self.task_method(peer, "tasks/update", update, options)
                        .await?;
                }
            }
            let wait = task
                .poll_interval_ms
                .map_or(DEFAULT_POLL, Duration::from_millis)
                .clamp(MIN_POLL, MAX_POLL);
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = cancel.cancelled() => {
                    let params = serde_json::json!({"taskId": id});
                    if let Err(e) = self.task_method(peer, "tasks/cancel", params, options).await {
                        tracing::debug!(task = %id, "could not cancel the task: {e}");
                    }
                    return Err(RequestError::Cancelled { method: R::METHOD.to_owned() });
                }
            }
            task = self.get_task(peer, &id, options).await?;
        }
    }

    /// `tasks/get` of the tasks extension: the task as it stands, with its result, error
    /// or questions inlined.
    pub(super) async fn get_task(
        &self,
        peer: &Peer,
        id: &str,
        options: &RequestOptions,
    ) -> Result<DetailedTask, RequestError> {
        let params = serde_json::json!({"taskId": id});
        let answer = self.task_method(peer, "tasks/get", params, options).await?;
        serde_json::from_str(answer.get()).map_err(|source| RequestError::Decode {
            method: "tasks/get".to_owned(),
            source,
        })
    }

    /// `tasks/cancel` of the tasks extension.
    pub(super) async fn cancel_task(&self, peer: &Peer, id: &str) -> Result<(), RequestError> {
        let params = serde_json::json!({"taskId": id});
        self.task_method(peer, "tasks/cancel", params, &RequestOptions::default())
            .await
            .map(drop)
    }

    /// Opens `subscriptions/listen` with `filter` and waits for its acknowledgement.
    pub(super) async fn listen(
        &self,
        peer: &Peer,
        filter: SubscriptionFilter,
    ) -> Result<Subscription, RequestError> {
        let params = with_meta(
            SubscriptionsListen::METHOD,
            &junction_protocol::stateless::SubscriptionsListenParams::new(filter),
            &self.meta,
        )?;
        let raw = jsonrpc::to_raw(&params).map_err(|source| RequestError::Encode {
            method: SubscriptionsListen::METHOD.to_owned(),
            source,
        })?;
        // One listen waits for its acknowledgement at a time, so acknowledgements cannot be
        // mixed up between two concurrent calls.
        let mut acks = self.acks.lock().await;
        while acks.try_recv().is_ok() {}
        let cancel = CancellationToken::new();
        let options = RequestOptions::default()
            .timeout(LISTEN_TIMEOUT)
            .cancel_on(cancel.clone());
        let peer = peer.clone();
        let version = self.meta.protocol_version.clone();
        let mut task = tokio::spawn(async move {
            match peer
                .request_raw(SubscriptionsListen::METHOD, Some(raw), options)
                .await
            {
                Ok(_) | Err(RequestError::Cancelled { .. }) => Ok(()),
                Err(e) => Err(explain(e, &version)),
            }
        });
        tokio::select! {
            ack = acks.recv() => match ack {
                Some(ack) => Ok(Subscription { acknowledged: ack.notifications, cancel, task }),
                None => Err(RequestError::Closed { method: SubscriptionsListen::METHOD.to_owned() }),
            },
            ended = &mut task => Err(match ended {
                Ok(Err(e)) => e,
                _ => RequestError::Invalid {
                    method: SubscriptionsListen::METHOD.to_owned(),
                    reason: "the server ended the subscription before acknowledging it".to_owned(),
                },
            }),
        }
    }
}

fn input_failed(method: &str, key: &str, input: &str, error: ErrorObject) -> RequestError {
    if error.code == ErrorCode::METHOD_NOT_FOUND {
        RequestError::NotSupported {
            method: method.to_owned(),
            reason: format!(
                "the server needs `{input}` input (key {key:?}), but this client has no handler for it"
            ),
        }
    } else {
        RequestError::Invalid {
            method: method.to_owned(),
            reason: format!(
                "answering the server's `{input}` input request (key {key:?}) failed: {}",
                error.message
            ),
        }
    }
}

/// An open `subscriptions/listen` stream. Notifications delivered on it reach
/// [`Client::take_notifications`](super::Client::take_notifications); dropping this value
/// does not end it, [`Subscription::cancel`] does.
#[derive(Debug)]
pub struct Subscription {
    acknowledged: SubscriptionFilter,
    cancel: CancellationToken,
    task: JoinHandle<Result<(), RequestError>>,
}

impl Subscription {
    /// The notification types the server agreed to send.
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }

    /// Ends the subscription (cancels the listen request).
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Waits until the subscription ended: cancelled, closed by the server (`Ok`) or failed.
    pub async fn ended(self) -> Result<(), RequestError> {
        self.task.await.unwrap_or_else(|_| {
            Err(RequestError::Closed {
                method: SubscriptionsListen::METHOD.to_owned(),
            })
        })
    }
}

/// What an `R` request run as task `task` ended with, once the task is terminal: its result
/// as `R`'s, its JSON-RPC error as the server's answer, a cancellation as an error saying so.
pub(super) fn ended<R: Request>(
    task: &mut DetailedTask,
) -> Option<Result<R::Result, RequestError>> {
    let id = &task.task_id;
    let said = || {
        task.status_message
            .as_ref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default()
    };
    Some(match task.status {
        TaskStatus::Completed => {
            let result = Value::Object(task.result.take().unwrap_or_default());
            serde_json::from_value(result).map_err(|source| RequestError::Decode {
                method: R::METHOD.to_owned(),
                source,
            })
        }
        TaskStatus::Failed => {
            let error = task.error.take().unwrap_or_else(|| {
                ErrorObject::internal(format!("task {id:?} failed without an error{}", said()))
            });
            Err(RequestError::Remote {
                method: R::METHOD.to_owned(),
                error,
            })
        }
        TaskStatus::Cancelled => Err(cancelled(R::METHOD, id, task.status_message.as_deref())),
        TaskStatus::Working | TaskStatus::InputRequired => return None,
    })
}

/// What `method` run as task `id` ends with when the server cancelled it, in either family.
pub(super) fn cancelled(method: &str, id: &str, message: Option<&str>) -> RequestError {
    RequestError::Remote {
        method: method.to_owned(),
        error: ErrorObject::internal(format!(
            "the server cancelled task {id:?}{}",
            message.map(|m| format!(": {m}")).unwrap_or_default()
        )),
    }
}
