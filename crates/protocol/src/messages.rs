//! Typed unions of the notifications each side may receive (schema 2025-11-25
//! `ServerNotification` / `ClientNotification`, plus the 2026-07-28 additions), for dispatch
//! after [`crate::Message::decode`]. Params are parsed once, straight from the raw JSON.
//!
//! ```
//! use junction_protocol::messages::ServerNotification;
//! use junction_protocol::Message;
//!
//! let frame = br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
//! let Message::Notification(n) = Message::decode(frame).unwrap() else { unreachable!() };
//! let typed = ServerNotification::from_parts(&n.method, n.params.as_deref()).unwrap();
//! assert!(matches!(typed, ServerNotification::ToolListChanged(_)));
//! assert_eq!(typed.method(), "notifications/tools/list_changed");
//! ```

use serde_json::value::RawValue;
use serde_json::Value;

use crate::elicitation::{ElicitationComplete, ElicitationCompleteParams};
use crate::jsonrpc::{self, Notification as RawNotification};
use crate::lifecycle::{Cancelled, CancelledParams, Initialized, Progress, ProgressParams};
use crate::logging::{LoggingMessage, LoggingMessageParams};
use crate::meta::NotificationParams;
use crate::method::{decode_params, Notification};
use crate::prompts::PromptListChanged;
use crate::resources::{ResourceListChanged, ResourceUpdated, ResourceUpdatedParams};
use crate::roots::RootsListChanged;
use crate::stateless::{SubscriptionsAcknowledged, SubscriptionsAcknowledgedParams};
use crate::tasks::{TaskStatusChanged, TaskStatusParams};
use crate::tools::ToolListChanged;

macro_rules! notification_union {
    (@optional optional) => { true };
    (@optional) => { false };
    (
        $(#[$doc:meta])*
        $name:ident {
            $( $(#[$vdoc:meta])* $variant:ident($marker:ty, $params:ty $(, $opt:ident)?), )*
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $( $(#[$vdoc])* $variant($params), )*
            /// A notification this crate does not know, kept as it came.
            Other {
                /// Its method.
                method: String,
                /// Its params.
                params: Option<Value>,
            },
        }

        impl $name {
            /// Decodes a notification from its method and raw params. Absent params read as
            /// `{}`; unknown methods become [`Self::Other`]. The error means the params of a
            /// known method have the wrong shape.
            pub fn from_parts(
                method: &str,
                params: Option<&RawValue>,
            ) -> Result<Self, serde_json::Error> {
                $(
                    if method == <$marker as Notification>::METHOD {
                        return decode_params(params).map($name::$variant);
                    }
                )*
                Ok($name::Other {
                    method: method.to_owned(),
                    params: params.map(|p| serde_json::from_str(p.get())).transpose()?,
                })
            }

            /// Decodes a framed notification.
            pub fn from_notification(n: &RawNotification) -> Result<Self, serde_json::Error> {
                Self::from_parts(&n.method, n.params.as_deref())
            }

            /// The method name.
            pub fn method(&self) -> &str {
                match self {
                    $( $name::$variant(_) => <$marker as Notification>::METHOD, )*
                    $name::Other { method, .. } => method,
                }
            }

            /// The method and raw params, ready to send. Params that may be omitted are
            /// left out when empty.
            pub fn into_parts(self) -> Result<(String, Option<Box<RawValue>>), serde_json::Error> {
                match self {
                    $(
                        $name::$variant(p) => {
                            let raw = jsonrpc::to_raw(&p)?;
                            let omit = notification_union!(@optional $($opt)?) && raw.get() == "{}";
                            Ok((
                                <$marker as Notification>::METHOD.to_owned(),
                                (!omit).then_some(raw),
                            ))
                        }
                    )*
                    $name::Other { method, params } => {
                        Ok((method, params.map(|p| jsonrpc::to_raw(&p)).transpose()?))
                    }
                }
            }

            /// The framed notification, ready to send.
            pub fn into_notification(self) -> Result<RawNotification, serde_json::Error> {
                let (method, params) = self.into_parts()?;
                Ok(RawNotification { method, params })
            }
        }
    };
}

notification_union! {
    /// Every notification a server sends (what a client receives).
    ServerNotification {
        /// `notifications/cancelled`.
        Cancelled(Cancelled, CancelledParams),
        /// `notifications/progress`.
        Progress(Progress, ProgressParams),
        /// `notifications/message`.
        LoggingMessage(LoggingMessage, LoggingMessageParams),
        /// `notifications/resources/updated`.
        ResourceUpdated(ResourceUpdated, ResourceUpdatedParams),
        /// `notifications/resources/list_changed`.
        ResourceListChanged(ResourceListChanged, NotificationParams, optional),
        /// `notifications/tools/list_changed`.
        ToolListChanged(ToolListChanged, NotificationParams, optional),
        /// `notifications/prompts/list_changed`.
        PromptListChanged(PromptListChanged, NotificationParams, optional),
        /// `notifications/elicitation/complete` (2025-11-25).
        ElicitationComplete(ElicitationComplete, ElicitationCompleteParams),
        /// `notifications/tasks/status` (2025-11-25).
        TaskStatus(TaskStatusChanged, TaskStatusParams),
        /// `notifications/subscriptions/acknowledged` (2026-07-28).
        SubscriptionsAcknowledged(SubscriptionsAcknowledged, SubscriptionsAcknowledgedParams),
    }
}

notification_union! {
    /// Every notification a client sends (what a server receives).
    ClientNotification {
        /// `notifications/cancelled`.
        Cancelled(Cancelled, CancelledParams),
        /// `notifications/progress`.
        Progress(Progress, ProgressParams),
        /// `notifications/initialized`.
        Initialized(Initialized, NotificationParams, optional),
        /// `notifications/roots/list_changed`.
        RootsListChanged(RootsListChanged, NotificationParams, optional),
        /// `notifications/tasks/status` (2025-11-25).
        TaskStatus(TaskStatusChanged, TaskStatusParams),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logging::LoggingLevel;
    use crate::{Message, ProgressToken, RequestId};
    use serde_json::json;

    fn server(frame: Value) -> Result<ServerNotification, serde_json::Error> {
        let bytes = serde_json::to_vec(&frame).unwrap();
        let Ok(Message::Notification(n)) = Message::decode(&bytes) else {
            panic!("not a notification: {frame}")
        };
        ServerNotification::from_notification(&n)
    }

    fn client(frame: Value) -> Result<ClientNotification, serde_json::Error> {
        let bytes = serde_json::to_vec(&frame).unwrap();
        let Ok(Message::Notification(n)) = Message::decode(&bytes) else {
            panic!("not a notification: {frame}")
        };
        ClientNotification::from_notification(&n)
    }

    /// Sends the notification back out and compares the frame with what came in.
    fn resend<N>(typed: N, into: impl FnOnce(N) -> RawNotification, frame: &Value) {
        let out = Message::Notification(into(typed)).encode();
        let back: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(&back, frame);
    }

    #[test]
    fn every_server_notification_decodes_and_re_encodes() {
        let frames = [
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "123", "reason": "User requested cancellation"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "abc123", "progress": 50.0, "total": 100.0, "message": "Reticulating splines..."}}),
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "error", "logger": "database", "data": {"error": "Connection failed"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///project/src/main.rs"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed", "params": {"_meta": {"k": 1}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": "550e8400"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {"taskId": "t", "status": "completed", "createdAt": "a", "lastUpdatedAt": "b", "ttl": null}}),
            json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"notifications": {"toolsListChanged": true}, "_meta": {"io.modelcontextprotocol/subscriptionId": 1}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/io.example/custom", "params": {"x": [1, 2]}}),
            json!({"jsonrpc": "2.0", "method": "notifications/io.example/bare"}),
        ];
        for frame in &frames {
            let typed = server(frame.clone()).unwrap();
            assert_eq!(typed.method(), frame["method"].as_str().unwrap());
            resend(typed, |t| t.into_notification().unwrap(), frame);
        }
        assert!(matches!(
            server(frames[1].clone()).unwrap(),
            ServerNotification::Progress(p) if p.progress_token == ProgressToken::from("abc123")
        ));
        assert!(matches!(
            server(frames[2].clone()).unwrap(),
            ServerNotification::LoggingMessage(m) if m.level == LoggingLevel::Error
        ));
        assert!(matches!(
            server(frames[10].clone()).unwrap(),
            ServerNotification::Other {
                params: Some(_),
                ..
            }
        ));
    }

    #[test]
    fn every_client_notification_decodes_and_re_encodes() {
        let frames = [
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1.0}}),
            json!({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {"taskId": "t", "status": "working", "createdAt": "a", "lastUpdatedAt": "a", "ttl": 1000}}),
        ];
        for frame in &frames {
            let typed = client(frame.clone()).unwrap();
            assert_eq!(typed.method(), frame["method"].as_str().unwrap());
            resend(typed, |t| t.into_notification().unwrap(), frame);
        }
        assert!(matches!(
            client(frames[2].clone()).unwrap(),
            ClientNotification::Cancelled(c) if c.request_id == Some(RequestId::Number(7))
        ));
        // A server-only notification is unknown to a server.
        assert!(matches!(
            client(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": 1}})).unwrap(),
            ClientNotification::Other { .. }
        ));
    }

    #[test]
    fn malformed_params_of_known_methods_are_errors() {
        for frame in [
            json!({"jsonrpc": "2.0", "method": "notifications/progress"}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}),
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "loud", "data": 1}}),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {}}),
        ] {
            assert!(server(frame.clone()).is_err(), "{frame}");
        }
        let err = server(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}})).unwrap_err();
        assert!(err.to_string().contains("progressToken"), "{err}");
    }

    #[test]
    fn into_parts_omits_empty_optional_params_only() {
        let (method, params) = ClientNotification::Initialized(NotificationParams::default())
            .into_parts()
            .unwrap();
        assert_eq!(
            (method.as_str(), params.is_none()),
            ("notifications/initialized", true)
        );
        let (_, params) = ClientNotification::Cancelled(CancelledParams::new(1))
            .into_parts()
            .unwrap();
        assert_eq!(params.unwrap().get(), r#"{"requestId":1}"#);
    }
}
