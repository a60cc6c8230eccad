//! The client's side of the session engine: answers the server's requests with the host's
//! handlers and hands every other notification to the stream of typed notifications.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use junction_protocol::content::Role;
use junction_protocol::elicitation::{Elicit, ElicitAction, ElicitParams};
use junction_protocol::jsonrpc;
use junction_protocol::lifecycle::InitializeResult;
use junction_protocol::messages::ServerNotification;
use junction_protocol::method::{decode_params, Notification as _, Request};
use junction_protocol::roots::{ListRoots, ListRootsResult};
use junction_protocol::sampling::{
    CreateMessage, CreateMessageParams, SamplingMessageContentBlock,
};
use junction_protocol::stateless::{SubscriptionsAcknowledged, SubscriptionsAcknowledgedParams};
use junction_protocol::{ErrorObject, Notification};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tokio::sync::mpsc;

use super::cache::ResultCache;
use super::handlers::{Elicitation, HandlerError, Roots, Sampling};
use super::task_receiver::TaskReceiver;
use crate::session::{BoxFuture, IncomingRequest, Peer, RequestContext, Service};
use crate::sync::lock;
use crate::transport::TransportEvent;

/// Answers `ping`, the requests of the features the host set handlers for, and -32601 for
/// the rest.
pub(super) struct ClientService {
    pub(super) handlers: Arc<Handlers>,
    /// What the server declared, shared with the [`Client`](super::Client): replaced when
    /// the transport reports a new session.
    pub(super) init: Arc<Mutex<InitializeResult>>,
    pub(super) notifications: mpsc::UnboundedSender<ServerNotification>,
    /// Where `notifications/subscriptions/acknowledged` goes: to the `listen` call waiting
    /// for it, not to the stream of notifications.
    pub(super) acks: mpsc::UnboundedSender<SubscriptionsAcknowledgedParams>,
    /// The answers a notification can make stale, shared with the stateless requests.
    pub(super) cache: Arc<ResultCache>,
    /// Where `notifications/tasks/status` goes, besides the stream: to the task waits.
    pub(super) task_updates: super::task::TaskUpdates,
    /// The server's requests run as tasks, when the host accepts them
    /// ([`ClientOptions::task_requests`](super::ClientOptions::task_requests)).
    pub(super) task_receiver: Option<TaskReceiver>,
}

/// The host's handlers for the server's requests, shared by the session (handshake family)
/// and the retry loop of `input_required` results (stateless family).
pub(super) struct Handlers {
    pub(super) sampling: Option<Sampling>,
    pub(super) elicitation: Option<Elicitation>,
    pub(super) roots: Option<Roots>,
}

impl Handlers {
    /// Refuses, before its handler runs, a sampling or elicitation request the handler cannot
    /// take (params that do not decode, or use what the client did not declare): the
    /// error [`Handlers::answer`] would give. Any other request passes.
    pub(super) fn check(&self, method: &str, params: Option<&RawValue>) -> Result<(), ErrorObject> {
        match (method, &self.sampling, &self.elicitation) {
            (CreateMessage::METHOD, Some(sampling), _) => {
                let params = decode::<CreateMessage>(params)?;
                check_sampling(sampling, &params).map_err(|e| e.into_error(CreateMessage::METHOD))
            }
            (Elicit::METHOD, _, Some(elicitation)) => {
                let params = decode::<Elicit>(params)?;
                check_mode(elicitation, &params).map_err(|e| e.into_error(Elicit::METHOD))
            }
            _ => Ok(()),
        }
    }

    /// Answers one request of the server with the handler for its method; -32601 when there
    /// is none.
    pub(super) async fn answer(
        &self,
        method: &str,
        params: Option<&RawValue>,
        context: RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match (method, &self.sampling, &self.elicitation, &self.roots) {
            ("ping", ..) => Ok(jsonrpc::empty_object()),
            (CreateMessage::METHOD, Some(sampling), ..) => {
                let params: CreateMessageParams = decode::<CreateMessage>(params)?;
                check_sampling(sampling, &params)
                    .map_err(|e| e.into_error(CreateMessage::METHOD))?;
                let result = (sampling.handler)(params, context)
                    .await
                    .map_err(|e| e.into_error(CreateMessage::METHOD))?;
                encode::<CreateMessage>(&result)
            }
            (Elicit::METHOD, _, Some(elicitation), _) => {
                let params: ElicitParams = decode::<Elicit>(params)?;
                check_mode(elicitation, &params).map_err(|e| e.into_error(Elicit::METHOD))?;
                let schema = match &params {
                    ElicitParams::Form(form) => Some(form.requested_schema.clone()),
                    ElicitParams::Url(_) => None,
                };
                let result = (elicitation.handler)(params, context)
                    .await
                    .map_err(|e| e.into_error(Elicit::METHOD))?;
                if let (Some(schema), ElicitAction::Accept) = (schema, result.action) {
                    let content = result.content.clone().unwrap_or_else(BTreeMap::new);
                    schema.check(&content).map_err(|problem| {
                        HandlerError::new(format!(
                            "the accepted content does not match the requested schema: {problem}"
                        ))
                        .into_error(Elicit::METHOD)
                    })?;
                }
                encode::<Elicit>(&result)
            }
            (ListRoots::METHOD, _, _, Some(roots)) => {
                let list = (roots.handler)((), context)
                    .await
                    .map_err(|e| e.into_error(ListRoots::METHOD))?;
                if let Some(bad) = list.iter().find(|r| !r.uri.starts_with("file://")) {
                    return Err(HandlerError::new(format!(
                        "the root {:?} is not a file:// URI",
                        bad.uri
                    ))
                    .into_error(ListRoots::METHOD));
                }
                encode::<ListRoots>(&ListRootsResult::new(list))
            }
            (other, ..) => Err(ErrorObject::method_not_found(other)),
        }
    }
}

impl Service for ClientService {
    fn request<'a>(
        &'a self,
        request: IncomingRequest,
    ) -> BoxFuture<'a, Result<Box<RawValue>, ErrorObject>> {
        Box::pin(async move {
            let IncomingRequest {
                method,
                params,
                context,
            } = request;
            if let Some(receiver) = &self.task_receiver {
                let params = params.as_deref();
                if let Some(answer) = receiver
                    .answer(&self.handlers, &method, params, &context)
                    .await
                {
                    return answer;
                }
            }
            self.handlers
                .answer(&method, params.as_deref(), context)
                .await
        })
    }

    fn transport_event(&self, event: TransportEvent) {
        if let TransportEvent::Reinitialized(result) = event {
            self.cache.clear();
            self.replace_init(*result);
        }
    }

    fn notification<'a>(&'a self, n: Notification, _: &'a Peer) -> BoxFuture<'a, ()> {
        if n.method == SubscriptionsAcknowledged::METHOD {
            match decode_params::<SubscriptionsAcknowledgedParams>(n.params.as_deref()) {
                Ok(ack) => {
                    let _ = self.acks.send(ack);
                }
                Err(e) => {
                    tracing::warn!(error = %e, "a subscription acknowledgement has malformed params; ignored")
                }
            }
            return Box::pin(async {});
        }
        self.cache.invalidate(&n.method, n.params.as_deref());
        let typed = ServerNotification::from_parts(&n.method, n.params.as_deref()).unwrap_or_else(
            |e| {
                // Kept rather than dropped, so that the host still sees what arrived.
                tracing::warn!(method = %n.method, error = %e, "a server notification has malformed params; passing it on as Other");
                ServerNotification::Other {
                    method: n.method.clone(),
                    params: n
                        .params
                        .as_deref()
                        .and_then(|p| serde_json::from_str::<Value>(p.get()).ok()),
                }
            },
        );
        if let ServerNotification::TaskStatus(params) = &typed {
            self.task_updates.tell(&params.task);
        }
        // Nobody listening is fine: notifications are advisory.
        let _ = self.notifications.send(typed);
        Box::pin(async {})
    }
}

impl ClientService {
    /// Takes the initialize result of a session the transport started in place of an expired
    /// one; kept only when it is of the revision this client negotiated, which the rest of
    /// the client relies on.
    fn replace_init(&self, new: InitializeResult) {
        let mut init = lock(&self.init);
        if new.protocol_version != init.protocol_version {
            tracing::warn!(
                was = %init.protocol_version,
                now = %new.protocol_version,
                "the new session negotiated another revision; keeping the previous initialize result"
            );
            return;
        }
        tracing::debug!(server = %new.server_info.name, "a new session replaced the expired one");
        *init = new;
    }
}

pub(super) fn decode<R: Request>(params: Option<&RawValue>) -> Result<R::Params, ErrorObject>
where
    R::Params: DeserializeOwned,
{
    decode_params(params)
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid params for {}: {e}", R::METHOD)))
}

pub(super) fn encode<R: Request>(result: &impl Serialize) -> Result<Box<RawValue>, ErrorObject> {
    jsonrpc::to_raw(result).map_err(|e| {
        ErrorObject::internal(format!("could not encode the result of {}: {e}", R::METHOD))
    })
}

/// The specification requires an error when tools arrive undeclared; `includeContext` is
/// refused the same way, so a handler never sees a request it did not agree to. A history
/// that breaks the tool-call rules is refused too (-32602, as the sampling section says).
fn check_sampling(sampling: &Sampling, params: &CreateMessageParams) -> Result<(), HandlerError> {
    if params.uses_tools() && !sampling.tools {
        return Err(HandlerError::invalid_params(
            "the request carries `tools` or `toolChoice`, but this client did not declare `sampling.tools`",
        ));
    }
    if params.uses_context() && !sampling.context {
        return Err(HandlerError::invalid_params(
            "the request asks for `includeContext` other than \"none\", but this client did not declare `sampling.context`",
        ));
    }
    check_tool_turns(params)
}

/// The sampling section's rules for tool calls in the history: a user message with tool
/// results holds nothing else, and an assistant message that uses tools is directly followed
/// by a user message with a result for every one of them.
fn check_tool_turns(params: &CreateMessageParams) -> Result<(), HandlerError> {
    let is_result =
        |b: &SamplingMessageContentBlock| matches!(b, SamplingMessageContentBlock::ToolResult(_));
    for (i, message) in params.messages.iter().enumerate() {
        let blocks = message.content.blocks();
        if message.role == Role::User
            && blocks.iter().any(is_result)
            && !blocks.iter().all(is_result)
        {
            return Err(HandlerError::invalid_params(format!(
                "message {i} mixes tool_result blocks with other content; a user message with tool results must hold only tool results"
            )));
        }
        let uses: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                SamplingMessageContentBlock::ToolUse(u) => Some(u.id.as_str()),
                _ => None,
            })
            .collect();
        if message.role != Role::Assistant || uses.is_empty() {
            continue;
        }
        let answered: Vec<&str> = params
            .messages
            .get(i + 1)
            .filter(|next| next.role == Role::User)
            .map(|next| {
                next.content
                    .blocks()
                    .iter()
                    .filter_map(|b| match b {
                        SamplingMessageContentBlock::ToolResult(r) => Some(r.tool_use_id.as_str()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        if let Some(missing) = uses.iter().find(|id| !answered.contains(id)) {
            return Err(HandlerError::invalid_params(format!(
                "the tool_use {missing:?} in message {i} has no tool_result in the user message that directly follows it"
            )));
        }
    }
    Ok(())
}

fn check_mode(elicitation: &Elicitation, params: &ElicitParams) -> Result<(), HandlerError> {
    match params {
        ElicitParams::Form(_) if !elicitation.form => Err(HandlerError::invalid_params(
            "form mode was requested, but this client declared only `elicitation.url`",
        )),
        ElicitParams::Url(_) if !elicitation.url => Err(HandlerError::invalid_params(
            "URL mode was requested, but this client declared only `elicitation.form`",
        )),
        _ => Ok(()),
    }
}
