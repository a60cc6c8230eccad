//! The members every result ends with, declared once: [`wire_result!`] writes a result
//! struct with its own members, then (for a cacheable result, `cached`) `ttlMs` and
//! `cacheScope`, then `_meta`, `resultType` and the unknown members kept as they came
//! (results are open). Each of those members is optional on the wire and skipped when
//! absent. Results are `#[non_exhaustive]`: other crates build them with their
//! constructors and these setters (`meta`, `result_type`, `ttl_ms`, `cache_scope`).
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

        impl $name {
            /// Sets `ttlMs`: how long the result may be cached, in milliseconds.
            pub fn ttl_ms(mut self, ttl_ms: u64) -> Self {
                self.ttl_ms = Some(ttl_ms);
                self
            }

            /// Sets `cacheScope`: who may share the cached result.
            pub fn cache_scope(mut self, scope: $crate::stateless::CacheScope) -> Self {
                self.cache_scope = Some(scope);
                self
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
        #[non_exhaustive]
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

        impl $name {
            /// Sets `_meta`.
            pub fn meta(mut self, meta: $crate::meta::Meta) -> Self {
                self.meta = Some(meta);
                self
            }

            /// Sets `resultType`.
            pub fn result_type(mut self, result_type: $crate::stateless::ResultType) -> Self {
                self.result_type = Some(result_type);
                self
            }
        }
    };
}

pub(crate) use wire_result;
