//! The members every result ends with, declared once: [`wire_result!`] writes a result
//! struct with its own members, then (for a cacheable result, `cached`) `ttlMs` and
//! `cacheScope`, then `_meta`, `resultType` and the unknown members kept as they came
//! (results are open). Each of those members is optional on the wire and skipped when
//! absent.
//!
//! ```text
//! wire_result! {
//!     /// The result of `tools/list`.
//!     #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
//!     cached pub struct ListToolsResult {
//!         /// One page of tools.
//!         pub tools: Vec<Tool>,
//!     }
//! }
//! ```

/// Declares a result struct with the common tail (see the [module docs](self)). The
/// struct's own members must end with a comma.
macro_rules! wire_result {
    (
        $(#[$attr:meta])*
        cached pub struct $name:ident { $($fields:tt)* }
    ) => {
        $crate::result_tail::wire_result! {
            @tail $(#[$attr])* $name { $($fields)*
                /// `ttlMs` (2026-07-28): how long the result may be cached, in milliseconds.
                #[serde(rename = "ttlMs", default, skip_serializing_if = "Option::is_none")]
                pub ttl_ms: Option<u64>,
                /// `cacheScope` (2026-07-28): who may share the cached result.
                #[serde(rename = "cacheScope", default, skip_serializing_if = "Option::is_none")]
                pub cache_scope: Option<$crate::stateless::CacheScope>,
            }
        }
    };
    (
        $(#[$attr:meta])*
        pub struct $name:ident { $($fields:tt)* }
    ) => {
        $crate::result_tail::wire_result! { @tail $(#[$attr])* $name { $($fields)* } }
    };
    (@tail $(#[$attr:meta])* $name:ident { $($fields:tt)* }) => {
        $(#[$attr])*
        pub struct $name {
            $($fields)*
            /// `_meta`.
            #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
            pub meta: Option<$crate::meta::Meta>,
            /// `resultType` (2026-07-28); absent means `complete`.
            #[serde(rename = "resultType", default, skip_serializing_if = "Option::is_none")]
            pub result_type: Option<$crate::stateless::ResultType>,
            /// Unknown members, kept (results are open).
            #[serde(flatten)]
            pub extra: serde_json::Map<String, serde_json::Value>,
        }
    };
}

pub(crate) use wire_result;
