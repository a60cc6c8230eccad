//! A server's change notifications shared by every instance of a deployment (see
//! [`super::session_store`]): what publishes them, and who hears those published by any
//! instance.

use std::sync::{Arc, Mutex};

use junction_protocol::Notification;
use tokio::sync::mpsc;

use super::session_store::{Routed, RoutedKind};
use crate::sync::lock;

/// Something told of every change notification published by any instance.
type Hearer = Arc<dyn Fn(&Notification) + Send + Sync>;

/// How a server publishes its change notifications to every instance sharing its
/// [`SessionStore`](super::SessionStore), and hears theirs, from the moment the HTTP server
/// has a store ([`super::HttpServer::shared_changes`]), without waiting for a session.
#[derive(Clone)]
pub struct SharedChanges {
    publish: mpsc::UnboundedSender<Routed>,
    instance: u32,
    hearers: Arc<Mutex<Vec<Hearer>>>,
}

impl std::fmt::Debug for SharedChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedChanges")
            .field("instance", &self.instance)
            .finish_non_exhaustive()
    }
}

impl SharedChanges {
    pub(super) fn new(publish: mpsc::UnboundedSender<Routed>, instance: u32) -> Self {
        SharedChanges {
            publish,
            instance,
            hearers: Arc::default(),
        }
    }

    /// Publishes a change notification (`method` with `params`) to every instance, this one
    /// included ([`RoutedKind::Changed`]).
    pub(crate) fn publish(&self, method: &str, params: Option<&serde_json::value::RawValue>) {
        let frame = match params {
            Some(params) => {
                serde_json::json!({"jsonrpc": "2.0", "method": method, "params": params})
            }
            None => serde_json::json!({"jsonrpc": "2.0", "method": method}),
        };
        let _ = self.publish.send(Routed {
            origin: self.instance,
            session: String::new(),
            kind: RoutedKind::Changed(frame.to_string()),
        });
    }

    /// Tells `hearer` of every change notification any instance publishes from now on.
    pub(crate) fn hear(&self, hearer: impl Fn(&Notification) + Send + Sync + 'static) {
        lock(&self.hearers).push(Arc::new(hearer));
    }

    /// Tells every hearer of a published change.
    pub(super) fn heard(&self, notification: &Notification) {
        let hearers = lock(&self.hearers).clone();
        for hearer in hearers {
            hearer(notification);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_published_as_a_notification_from_this_instance() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let changes = SharedChanges::new(tx, 9);
        let params = serde_json::value::RawValue::from_string(r#"{"uri":"a://b"}"#.into()).unwrap();
        changes.publish("notifications/resources/updated", Some(&params));
        let routed = rx.try_recv().unwrap();
        assert_eq!(routed.origin, 9);
        let RoutedKind::Changed(frame) = routed.kind else {
            panic!("a change: {routed:?}");
        };
        let value: serde_json::Value = serde_json::from_str(&frame).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "a://b"}})
        );
    }

    #[test]
    fn every_hearer_hears_each_change() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let changes = SharedChanges::new(tx, 1);
        let heard = Arc::new(Mutex::new(Vec::new()));
        for n in 0..2 {
            let heard = heard.clone();
            changes.hear(move |notification| {
                lock(&heard).push((n, notification.method.clone()));
            });
        }
        changes.heard(&Notification {
            method: "notifications/x".into(),
            params: None,
        });
        assert_eq!(
            *lock(&heard),
            [
                (0, "notifications/x".to_owned()),
                (1, "notifications/x".to_owned())
            ]
        );
    }
}
