//! Shared handler state, as axum does it: give the server a value with
//! [`ServerBuilder::state`](super::ServerBuilder::state), and a tool that takes a
//! [`State<S>`] as its first parameter gets a clone of it on each call. Resource, template,
//! prompt and completion handlers ask their request for it (`request.state::<S>()`).
//!
//! ```
//! use junction::server::{tool, Server, State};
//!
//! #[derive(Clone)]
//! struct Greeter {
//!     greeting: std::sync::Arc<str>,
//! }
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Who {
//!     /// Whom to greet.
//!     name: String,
//! }
//!
//! let server = Server::builder("greeter", "1")
//!     .state(Greeter { greeting: "Hello".into() })
//!     .tool(tool("greet", |State(g): State<Greeter>, who: Who| async move {
//!         format!("{}, {}!", g.greeting, who.name)
//!     }))
//!     .build()
//!     .unwrap();
//! # drop(server);
//! ```
//!
//! A tool that needs a state the server was not given is refused when it is added
//! ([`BuildError::MissingState`](super::BuildError::MissingState)), so a call never finds it
//! missing.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// The state of type `S` given to [`ServerBuilder::state`](super::ServerBuilder::state), as a
/// tool parameter.
#[derive(Debug, Clone, Copy, Default)]
pub struct State<S>(pub S);

/// The states of one server, by type.
#[derive(Clone, Default)]
pub(super) struct States(HashMap<TypeId, Arc<dyn Any + Send + Sync>>);

impl States {
    pub(super) fn insert<S: Clone + Send + Sync + 'static>(&mut self, state: S) {
        self.0.insert(TypeId::of::<S>(), Arc::new(state));
    }

    /// A clone of the state of type `S`.
    pub(super) fn get<S: Clone + 'static>(&self) -> Option<S> {
        self.0.get(&TypeId::of::<S>())?.downcast_ref::<S>().cloned()
    }

    pub(super) fn has(&self, id: TypeId) -> bool {
        self.0.contains_key(&id)
    }
}
