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
//! Notifications of one server are handled one at a time, in order, on a task of their own
//! that ends when the connection does, noticing then that the server stopped (see
//! `ConnectedServer::notice_stop`).

use std::sync::{Arc, Weak};

use junction::client::ServerNotification;

use crate::events::{Event, EventSink};
use crate::servers::ConnectedServer;

/// Starts handling `server`'s notifications.
pub(crate) fn follow(server: &Arc<ConnectedServer>, events: &EventSink) {
    let Some(mut notifications) = server.client.take_notifications() else {
        return;
    };
    // Weak: the task must not keep a server alive after the host let it go.
    let weak: Weak<ConnectedServer> = Arc::downgrade(server);
    let name = server.name.clone();
    let events = events.clone();
    tokio::spawn(async move {
        while let Some(notification) = notifications.recv().await {
            match weak.upgrade() {
                Some(server) => handle(&server, notification, &events).await,
                None => break,
            }
        }
        tracing::debug!(server = %name, "no more notifications");
        // The connection is over: unless the host ended it, the server stopped.
        if let Some(server) = weak.upgrade() {
            server.notice_stop(&events).await;
        }
    });
}

async fn handle(server: &ConnectedServer, notification: ServerNotification, events: &EventSink) {
    let name = &server.name;
    let failed = |what: &str, e: junction::RequestError| Event::Warning {
        message: format!("server `{name}` said its {what} changed, but listing them failed: {e}"),
    };
    let event = match notification {
        ServerNotification::ToolListChanged(_) => match server.refresh_tools().await {
            Ok(tools) => Event::ToolsChanged {
                server: name.clone(),
                tools: tools.into_iter().map(|t| t.name).collect(),
            },
            Err(e) => failed("tools", e),
        },
        ServerNotification::PromptListChanged(_) => match server.refresh_prompts().await {
            Ok(prompts) => Event::PromptsChanged {
                server: name.clone(),
                prompts: prompts.len(),
            },
            Err(e) => failed("prompts", e),
        },
        ServerNotification::ResourceListChanged(_) => match server.refresh_resources().await {
            Ok(resources) => Event::ResourcesChanged {
                server: name.clone(),
                resources,
            },
            Err(e) => failed("resources", e),
        },
        other => notification_event(name, other),
    };
    events.emit(event);
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
