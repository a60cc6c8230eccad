//! Typed methods, and the one table of what the protocol says about each of them.
//!
//! Each request or notification of the protocol is a marker type that names its method
//! string, its params type and (for requests) its result type, and declares, once, the facts
//! the rest of the stack derives its behaviour from ([`MethodInfo`]): which protocol
//! families serve it, the capability it needs, whether its result is cacheable (2026-07-28
//! `ttlMs` / `cacheScope`), and which member of its params the `Mcp-Name` header repeats.
//! [`REQUESTS`] and [`NOTIFICATIONS`] list every method of the protocol; [`request`] and
//! [`notification`] find one by its name, for the dispatch of incoming messages.
//!
//! ```
//! use junction_protocol::method::{Capability, Families, NameParam, Request};
//! use junction_protocol::meta::{EmptyParams, EmptyResult};
//! use junction_protocol::version::Family;
//!
//! junction_protocol::request!(
//!     /// `example/lookup`: a method of an extension.
//!     Lookup, "example/lookup", EmptyParams, EmptyResult,
//!     families = Stateless, capability = Tools, cacheable = true, mcp_name = Name
//! );
//! assert_eq!(Lookup::METHOD, "example/lookup");
//! assert!(!Lookup::INFO.families.serves(Family::Handshake));
//! assert_eq!(Lookup::INFO.mcp_name.member(), Some("name"));
//!
//! let call = junction_protocol::method::request("tools/call").unwrap();
//! assert_eq!(call.capability, Capability::Tools);
//! assert!(call.families == Families::Both && !call.cacheable);
//! assert_eq!(call.mcp_name, NameParam::Name);
//! ```
//!
//! Adding a method: declare it with [`request!`](crate::request) or
//! [`notification!`](crate::notification) in its feature's module, then list it in
//! [`REQUESTS`] or [`NOTIFICATIONS`].

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::version::Family;

/// Reads a `params` member as `T`; absent params read as `{}`, so types whose members are all
/// optional decode from nothing and the others report the missing member by name.
pub fn decode_params<T: DeserializeOwned>(
    params: Option<&RawValue>,
) -> Result<T, serde_json::Error> {
    serde_json::from_str(params.map_or("{}", RawValue::get))
}

/// The protocol families that have a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Families {
    /// Both the handshake revisions and 2026-07-28.
    Both,
    /// Only the handshake revisions (2024-11-05 … 2025-11-25); 2026-07-28 removed it.
    Handshake,
    /// Only 2026-07-28.
    Stateless,
}

impl Families {
    /// Whether `family` has the method.
    pub const fn serves(self, family: Family) -> bool {
        matches!(
            (self, family),
            (Families::Both, _)
                | (Families::Handshake, Family::Handshake)
                | (Families::Stateless, Family::Stateless)
        )
    }
}

/// The capability a method needs: of the server for the methods a client sends, of the
/// client for those a server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// Always available.
    Always,
    /// Server `tools`.
    Tools,
    /// Server `resources`.
    Resources,
    /// Server `prompts`.
    Prompts,
    /// Server `completions`.
    Completions,
    /// Server `logging`.
    Logging,
    /// `tasks` (2025-11-25), the tasks extension on 2026-07-28.
    Tasks,
    /// Client `sampling`.
    Sampling,
    /// Client `elicitation`.
    Elicitation,
    /// Client `roots`.
    Roots,
}

/// The member of a method's params that the 2026-07-28 `Mcp-Name` header repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameParam {
    /// No header: the method names nothing.
    Absent,
    /// The `name` member (a tool or a prompt).
    Name,
    /// The `uri` member (a resource).
    Uri,
    /// The `taskId` member (the 2026-07-28 tasks extension).
    TaskId,
}

impl NameParam {
    /// The member's name in the params, if the method has one.
    pub const fn member(self) -> Option<&'static str> {
        match self {
            NameParam::Absent => None,
            NameParam::Name => Some("name"),
            NameParam::Uri => Some("uri"),
            NameParam::TaskId => Some("taskId"),
        }
    }
}

/// What the protocol says about one method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MethodInfo {
    /// The method name on the wire.
    pub name: &'static str,
    /// The families that have it.
    pub families: Families,
    /// The capability it needs.
    pub capability: Capability,
    /// Whether its 2026-07-28 result carries `ttlMs` and `cacheScope`.
    pub cacheable: bool,
    /// The params member `Mcp-Name` repeats.
    pub mcp_name: NameParam,
}

impl MethodInfo {
    /// A method of both families that needs nothing, is not cached and names nothing; the
    /// other constructors change one fact each (what [`request!`](crate::request) calls).
    pub const fn new(name: &'static str) -> Self {
        MethodInfo {
            name,
            families: Families::Both,
            capability: Capability::Always,
            cacheable: false,
            mcp_name: NameParam::Absent,
        }
    }

    /// Sets the families.
    pub const fn families(mut self, families: Families) -> Self {
        self.families = families;
        self
    }

    /// Sets the capability.
    pub const fn capability(mut self, capability: Capability) -> Self {
        self.capability = capability;
        self
    }

    /// Sets whether the result is cacheable.
    pub const fn cacheable(mut self, cacheable: bool) -> Self {
        self.cacheable = cacheable;
        self
    }

    /// Sets the `Mcp-Name` member.
    pub const fn mcp_name(mut self, member: NameParam) -> Self {
        self.mcp_name = member;
        self
    }
}

/// A request method: what is sent, and what comes back.
pub trait Request {
    /// The method name on the wire.
    const METHOD: &'static str;
    /// What the protocol says about it.
    const INFO: MethodInfo;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The `result` member.
    type Result: Serialize + DeserializeOwned + Send + 'static;
}

/// A notification method.
pub trait Notification {
    /// The method name on the wire.
    const METHOD: &'static str;
    /// What the protocol says about it.
    const INFO: MethodInfo;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned + Send + 'static;
}

/// Declares a request marker type. After the types, optional facts in this order of
/// choice: `families = Both | Handshake | Stateless`, `capability = Tools | …` (see
/// [`Capability`]), `cacheable = true`, `mcp_name = Name | Uri | TaskId`.
#[macro_export]
macro_rules! request {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty, $result:ty $(, $fact:ident = $value:ident)* $(,)?) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub enum $name {}
        impl $crate::method::Request for $name {
            const METHOD: &'static str = $method;
            const INFO: $crate::method::MethodInfo =
                $crate::__method_info!($method $(, $fact = $value)*);
            type Params = $params;
            type Result = $result;
        }
    };
}

/// Declares a notification marker type; the facts are those of [`request!`](crate::request).
#[macro_export]
macro_rules! notification {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty $(, $fact:ident = $value:ident)* $(,)?) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub enum $name {}
        impl $crate::method::Notification for $name {
            const METHOD: &'static str = $method;
            const INFO: $crate::method::MethodInfo =
                $crate::__method_info!($method $(, $fact = $value)*);
            type Params = $params;
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __method_info {
    ($method:literal $(, $fact:ident = $value:ident)*) => {{
        #[allow(unused_imports)]
        use $crate::method::{Capability::*, Families::*, NameParam::*};
        $crate::method::MethodInfo::new($method) $(.$fact($value))*
    }};
}

macro_rules! table {
    ($trait:ident: $($ty:path),* $(,)?) => {
        &[$(<$ty as $trait>::INFO),*]
    };
}

/// Every request of the protocol, either direction.
pub const REQUESTS: &[MethodInfo] = table![Request:
    crate::lifecycle::Initialize,
    crate::lifecycle::Ping,
    crate::tools::ListTools,
    crate::tools::CallTool,
    crate::resources::ListResources,
    crate::resources::ListResourceTemplates,
    crate::resources::ReadResource,
    crate::resources::Subscribe,
    crate::resources::Unsubscribe,
    crate::prompts::ListPrompts,
    crate::prompts::GetPrompt,
    crate::completion::Complete,
    crate::logging::SetLevel,
    crate::tasks::GetTask,
    crate::tasks::GetTaskPayload,
    crate::tasks::CancelTask,
    crate::tasks::ListTasks,
    crate::task_extension::UpdateTask,
    crate::stateless::Discover,
    crate::stateless::SubscriptionsListen,
    crate::sampling::CreateMessage,
    crate::elicitation::Elicit,
    crate::roots::ListRoots,
];

/// Every notification of the protocol, either direction.
pub const NOTIFICATIONS: &[MethodInfo] = table![Notification:
    crate::lifecycle::Initialized,
    crate::lifecycle::Cancelled,
    crate::lifecycle::Progress,
    crate::logging::LoggingMessage,
    crate::tools::ToolListChanged,
    crate::resources::ResourceListChanged,
    crate::resources::ResourceUpdated,
    crate::prompts::PromptListChanged,
    crate::roots::RootsListChanged,
    crate::elicitation::ElicitationComplete,
    crate::tasks::TaskStatusChanged,
    crate::stateless::SubscriptionsAcknowledged,
];

/// The request named `method`, if the protocol has one.
pub fn request(method: &str) -> Option<&'static MethodInfo> {
    REQUESTS.iter().find(|m| m.name == method)
}

/// The notification named `method`, if the protocol has one.
pub fn notification(method: &str) -> Option<&'static MethodInfo> {
    NOTIFICATIONS.iter().find(|m| m.name == method)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        for table in [REQUESTS, NOTIFICATIONS] {
            for (i, m) in table.iter().enumerate() {
                assert!(
                    table[i + 1..].iter().all(|o| o.name != m.name),
                    "{} is listed twice",
                    m.name
                );
            }
        }
    }

    #[test]
    fn the_removed_and_the_cacheable_methods_of_2026_07_28() {
        let removed: Vec<&str> = REQUESTS
            .iter()
            .filter(|m| !m.families.serves(Family::Stateless))
            .map(|m| m.name)
            .collect();
        assert_eq!(
            removed,
            [
                "initialize",
                "ping",
                "resources/subscribe",
                "resources/unsubscribe",
                "logging/setLevel",
                "tasks/result",
                "tasks/list"
            ]
        );
        let cacheable: Vec<&str> = REQUESTS
            .iter()
            .filter(|m| m.cacheable)
            .map(|m| m.name)
            .collect();
        assert_eq!(
            cacheable,
            [
                "tools/list",
                "resources/list",
                "resources/templates/list",
                "resources/read",
                "prompts/list",
                "server/discover"
            ]
        );
        assert_eq!(request("resources/read").unwrap().mcp_name, NameParam::Uri);
        assert_eq!(request("prompts/get").unwrap().mcp_name, NameParam::Name);
        assert_eq!(request("tasks/cancel").unwrap().mcp_name, NameParam::TaskId);
        assert!(!request("tasks/update")
            .unwrap()
            .families
            .serves(Family::Handshake));
        assert!(request("notifications/initialized").is_none());
        assert!(notification("notifications/initialized").is_some());
    }
}
