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

use junction::client::{ServerNotification, Subscription};
use junction_protocol::stateless::SubscriptionFilter;

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
                Some(server) => refresh(&server, stale, Report::Every, &events).await,
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
/// the server still answers (see `ConnectedServer::notice_unreachable`). A server that
/// still answers (its stream was ended by the server, or cut by a proxy on the way) is
/// listened to again, after a back-off that doubles up to [`REOPEN_MAX`] while streams end
/// soon after opening; once reopened, the lists are listed again, since changes may have
/// been missed while no stream was open.
fn watch_listening(server: Weak<ConnectedServer>, mut listening: Subscription, events: EventSink) {
    tokio::spawn(async move {
        let mut wait = REOPEN_FIRST;
        loop {
            let filter = listening.acknowledged().clone();
            let opened = tokio::time::Instant::now();
            let ended = listening.ended().await;
            tracing::debug!(?ended, "the listen stream ended");
            let Some(live) = server.upgrade() else {
                return;
            };
            if let Err(junction::RequestError::Transport { .. }) = &ended {
                if live.notice_unreachable(&events).await.is_some() {
                    return;
                }
            }
            if live.is_closing() || live.is_down() {
                return;
            }
            let why = match &ended {
                Ok(()) => "the server ended it".to_owned(),
                Err(e) => e.to_string(),
            };
            tracing::warn!(server = %live.name, "the stream of list changes ended ({why}); listening again");
            drop(live);
            if opened.elapsed() >= REOPEN_STEADY {
                wait = REOPEN_FIRST;
            }
            let Some(reopened) = reopen(&server, &filter, &events, &mut wait).await else {
                return;
            };
            listening = reopened;
        }
    });
}

/// The first wait before a `subscriptions/listen` stream that ended is opened again.
const REOPEN_FIRST: Duration = Duration::from_millis(250);
/// The longest wait between attempts to open it again.
const REOPEN_MAX: Duration = Duration::from_secs(30);
/// A stream that stayed open this long was fine: the next wait starts from the first again.
const REOPEN_STEADY: Duration = Duration::from_secs(60);

/// Opens `server`'s listen stream for `filter` again, waiting `wait` first and doubling it
/// (up to [`REOPEN_MAX`]) after each failure; then lists again each list it covers, and
/// reports those that changed. `None` once the server is gone, stopped or being ended.
async fn reopen(
    server: &Weak<ConnectedServer>,
    filter: &SubscriptionFilter,
    events: &EventSink,
    wait: &mut Duration,
) -> Option<Subscription> {
    loop {
        tokio::time::sleep(*wait).await;
        *wait = (*wait * 2).min(REOPEN_MAX);
        let live = server.upgrade()?;
        if live.is_closing() || live.is_down() {
            return None;
        }
        match live.client.listen(filter.clone()).await {
            Ok(listening) => {
                let covered = |asked: Option<bool>| asked == Some(true);
                let acknowledged = listening.acknowledged();
                let lists = Stale {
                    tools: covered(acknowledged.tools_list_changed),
                    prompts: covered(acknowledged.prompts_list_changed),
                    resources: covered(acknowledged.resources_list_changed),
                };
                refresh(&live, lists, Report::Changed, events).await;
                return Some(listening);
            }
            Err(e) => {
                tracing::warn!(server = %live.name, "could not listen for list changes again ({e}); trying again in {wait:?}");
            }
        }
    }
}

/// Which new lists [`refresh`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Report {
    /// Each one: the server said it changed.
    Every,
    /// Only those that differ from before: nobody said they changed.
    Changed,
}

/// Lists again what a burst said changed, once each, and reports each new list (or, with
/// [`Report::Changed`], each that differs from before).
async fn refresh(server: &ConnectedServer, stale: Stale, report: Report, events: &EventSink) {
    let name = &server.name;
    let failed = |what: &str, e: junction::RequestError| Event::Warning {
        message: format!("server `{name}`: listing its {what} again failed: {e}"),
    };
    let every = report == Report::Every;
    if stale.tools {
        let before = server.tools();
        match server.refresh_tools().await {
            Ok(tools) if every || tools != before => events.emit(Event::ToolsChanged {
                server: name.clone(),
                tools: tools.into_iter().map(|t| t.name).collect(),
            }),
            Ok(_) => {}
            Err(e) => events.emit(failed("tools", e)),
        }
    }
    if stale.prompts {
        let before = server.prompts();
        match server.refresh_prompts().await {
            Ok(prompts) if every || prompts != before => events.emit(Event::PromptsChanged {
                server: name.clone(),
                prompts: prompts.len(),
            }),
            Ok(_) => {}
            Err(e) => events.emit(failed("prompts", e)),
        }
    }
    if stale.resources {
        let before = (server.resources(), server.templates());
        match server.refresh_resources().await {
            Ok(resources) if every || (server.resources(), server.templates()) != before => events
                .emit(Event::ResourcesChanged {
                    server: name.clone(),
                    resources,
                }),
            Ok(_) => {}
            Err(e) => events.emit(failed("resources", e)),
        }
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
