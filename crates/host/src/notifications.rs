//! What the host does with a server's notifications (typed, as
//! [`junction::client::ServerNotification`]).
//!
//! - `notifications/tools/list_changed`: the server's tools are listed again; the model
//!   sees the new names from its next step on ([`Event::ToolsChanged`]).
//! - `notifications/prompts/list_changed` and `notifications/resources/list_changed`: those
//!   lists are listed again ([`Event::PromptsChanged`], [`Event::ResourcesChanged`]).
//! - `notifications/resources/updated` becomes [`Event::ResourceUpdated`];
//!   `notifications/elicitation/complete` becomes [`Event::ElicitationCompleted`];
//!   `notifications/message` becomes [`Event::LogLine`]; any other becomes
//!   [`Event::ServerNotification`].
//!
//! A burst of list-changed notifications is coalesced: after the first, the host waits
//! `SETTLE` for more, then lists each list that changed once, and reports it once.
//!
//! Notifications of one server are handled one at a time, in order, on a task of their own
//! that ends when the connection does, noticing then that the server stopped (see
//! `ConnectedServer::notice_stop`). On 2026-07-28, whose HTTP connection has no end of its
//! own, the end of the `subscriptions/listen` stream is watched instead.

use std::sync::{Arc, Weak};
use std::time::Duration;

use junction::client::ServerNotification;

use crate::events::{Event, EventSink};
use crate::servers::ConnectedServer;

/// How long the host waits, after a list-changed notification, for more of them before
/// listing again: a burst of them (a server loading plugins, say) costs one listing.
const SETTLE: Duration = Duration::from_millis(50);

/// The lists a burst of list-changed notifications asked to list again.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Stale {
    tools: bool,
    prompts: bool,
    resources: bool,
}

impl Stale {
    /// Marks the list `notification` says changed; `false` when it is no list change.
    fn note(&mut self, notification: &ServerNotification) -> bool {
        match notification {
            ServerNotification::ToolListChanged(_) => self.tools = true,
            ServerNotification::PromptListChanged(_) => self.prompts = true,
            ServerNotification::ResourceListChanged(_) => self.resources = true,
            _ => return false,
        }
        true
    }
}

/// Starts handling `server`'s notifications.
pub(crate) fn follow(server: &Arc<ConnectedServer>, events: &EventSink) {
    let Some(mut notifications) = server.client.take_notifications() else {
        return;
    };
    // Weak: the task must not keep a server alive after the host let it go.
    let weak: Weak<ConnectedServer> = Arc::downgrade(server);
    if let Some(listening) = server.take_listening() {
        watch_listening(Arc::downgrade(server), listening, events.clone());
    }
    let name = server.name.clone();
    let events = events.clone();
    tokio::spawn(async move {
        let mut open = true;
        while open {
            let Some(first) = notifications.recv().await else {
                break;
            };
            let mut stale = Stale::default();
            if !stale.note(&first) {
                events.emit(notification_event(&name, first));
                continue;
            }
            // Gather the rest of the burst; other notifications are shown as they come.
            let settled = tokio::time::Instant::now() + SETTLE;
            loop {
                match tokio::time::timeout_at(settled, notifications.recv()).await {
                    Ok(Some(next)) => {
                        if !stale.note(&next) {
                            events.emit(notification_event(&name, next));
                        }
                    }
                    Ok(None) => {
                        open = false;
                        break;
                    }
                    Err(_) => break,
                }
            }
            match weak.upgrade() {
                Some(server) => refresh(&server, stale, &events).await,
                None => return,
            }
        }
        tracing::debug!(server = %name, "no more notifications");
        // The connection is over: unless the host ended it, the server stopped.
        if let Some(server) = weak.upgrade() {
            server.notice_stop(&events).await;
        }
    });
}

/// On 2026-07-28 the `subscriptions/listen` stream is the only one that stays open: when
/// it fails in the transport (an HTTP server that went away), the host finds out whether
/// the server still answers (see `ConnectedServer::notice_unreachable`).
fn watch_listening(
    server: Weak<ConnectedServer>,
    listening: junction::client::Subscription,
    events: EventSink,
) {
    tokio::spawn(async move {
        let ended = listening.ended().await;
        tracing::debug!(?ended, "the listen stream ended");
        if let (Err(junction::RequestError::Transport { .. }), Some(server)) =
            (ended, server.upgrade())
        {
            server.notice_unreachable(&events).await;
        }
    });
}

/// Lists again what a burst said changed, once each, and reports each new list.
async fn refresh(server: &ConnectedServer, stale: Stale, events: &EventSink) {
    let name = &server.name;
    let failed = |what: &str, e: junction::RequestError| Event::Warning {
        message: format!("server `{name}` said its {what} changed, but listing them failed: {e}"),
    };
    if stale.tools {
        events.emit(match server.refresh_tools().await {
            Ok(tools) => Event::ToolsChanged {
                server: name.clone(),
                tools: tools.into_iter().map(|t| t.name).collect(),
            },
            Err(e) => failed("tools", e),
        });
    }
    if stale.prompts {
        events.emit(match server.refresh_prompts().await {
            Ok(prompts) => Event::PromptsChanged {
                server: name.clone(),
                prompts: prompts.len(),
            },
            Err(e) => failed("prompts", e),
        });
    }
    if stale.resources {
        events.emit(match server.refresh_resources().await {
            Ok(resources) => Event::ResourcesChanged {
                server: name.clone(),
                resources,
            },
            Err(e) => failed("resources", e),
        });
    }
}

/// The event for a notification that needs no request.
pub(crate) fn notification_event(server: &str, notification: ServerNotification) -> Event {
    let server = server.to_owned();
    match notification {
        ServerNotification::LoggingMessage(p) => Event::LogLine {
            server,
            level: p.level.as_str().to_owned(),
            logger: p.logger,
            data: p.data,
        },
        ServerNotification::ResourceUpdated(p) => Event::ResourceUpdated { server, uri: p.uri },
        ServerNotification::ElicitationComplete(p) => Event::ElicitationCompleted {
            server,
            elicitation_id: p.elicitation_id,
        },
        other => {
            let method = other.method().to_owned();
            // Re-encoding a notification that was just decoded cannot fail; if it did, the
            // event still names the method.
            let params = other
                .into_parts()
                .ok()
                .and_then(|(_, raw)| raw)
                .and_then(|raw| serde_json::from_str(raw.get()).ok());
            Event::ServerNotification {
                server,
                method,
                params,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn typed(method: &str, params: serde_json::Value) -> ServerNotification {
        let raw = serde_json::value::to_raw_value(&params).unwrap();
        ServerNotification::from_parts(method, Some(&raw)).unwrap()
    }

    #[test]
    fn logs_updates_and_completions_get_their_own_events_and_others_stay_notifications() {
        assert_eq!(
            notification_event(
                "s",
                typed(
                    "notifications/message",
                    json!({"level": "warning", "logger": "db", "data": "slow"})
                )
            ),
            Event::LogLine {
                server: "s".into(),
                level: "warning".into(),
                logger: Some("db".into()),
                data: json!("slow"),
            }
        );
        assert_eq!(
            notification_event(
                "s",
                typed(
                    "notifications/resources/updated",
                    json!({"uri": "file:///a"})
                )
            ),
            Event::ResourceUpdated {
                server: "s".into(),
                uri: "file:///a".into()
            }
        );
        assert_eq!(
            notification_event(
                "s",
                typed(
                    "notifications/elicitation/complete",
                    json!({"elicitationId": "e1"})
                )
            ),
            Event::ElicitationCompleted {
                server: "s".into(),
                elicitation_id: "e1".into()
            }
        );
        assert_eq!(
            notification_event("s", typed("notifications/x.custom", json!({"k": 1}))),
            Event::ServerNotification {
                server: "s".into(),
                method: "notifications/x.custom".into(),
                params: Some(json!({"k": 1})),
            }
        );
    }
}
