//! Typed methods: each request or notification of the protocol is a marker type that names
//! its method string, its params type and (for requests) its result type.
//!
//! ```
//! use junction_protocol::method::Request;
//! use junction_protocol::meta::{EmptyParams, EmptyResult};
//!
//! junction_protocol::request!(
//!     /// `ping`: answered with `{}`.
//!     Ping, "ping", EmptyParams, EmptyResult
//! );
//! assert_eq!(Ping::METHOD, "ping");
//! ```

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;

/// Reads a `params` member as `T`; absent params read as `{}`, so types whose members are all
/// optional decode from nothing and the others report the missing member by name.
pub fn decode_params<T: DeserializeOwned>(
    params: Option<&RawValue>,
) -> Result<T, serde_json::Error> {
    serde_json::from_str(params.map_or("{}", RawValue::get))
}

/// A request method: what is sent, and what comes back.
pub trait Request {
    /// The method name on the wire.
    const METHOD: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The `result` member.
    type Result: Serialize + DeserializeOwned + Send + 'static;
}

/// A notification method.
pub trait Notification {
    /// The method name on the wire.
    const METHOD: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned + Send + 'static;
}

/// Declares a request marker type.
#[macro_export]
macro_rules! request {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty, $result:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub enum $name {}
        impl $crate::method::Request for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
            type Result = $result;
        }
    };
}

/// Declares a notification marker type.
#[macro_export]
macro_rules! notification {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub enum $name {}
        impl $crate::method::Notification for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
        }
    };
}
