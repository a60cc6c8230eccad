//! Typed routes: each method the server answers is bound once, by its marker type, to a
//! handler that receives its decoded params and returns its typed result.
//!
//! ```text
//! Routes::default()
//!     .route::<CallTool>(call_tool)      // async fn call_tool(Served, CallToolParams)
//!     .route::<ListTools>(list_tools)    //     -> Result<CallToolResult, ErrorObject>
//! ```
//!
//! A route decodes the params (a bad one is -32602 naming the method), runs the handler and
//! encodes its result. On a connection without a handshake it reads the params and their
//! envelope in one walk, and the router decides the family from the envelope
//! ([`Admission::Undecided`]). On 2026-07-28 it also runs the handler against its input rounds (see
//! [`super::stateless`]) and stamps the typed result ([`Answer`]) before encoding it, so a
//! result is encoded once and never read back. Each call costs one boxed future.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use junction_protocol::jsonrpc;
use junction_protocol::method::{decode_params, MethodInfo, Request};
use junction_protocol::stateless::RequestEnvelope;
use junction_protocol::version::Family;
use junction_protocol::{ErrorObject, ProtocolVersion};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;

use super::fixed_keys::FixedKeys;
use super::router::Router;
use super::stateless::{self, Answer, Call};
use super::Context;
use crate::session::{BoxFuture, RequestContext};

type Outcome = Result<Box<RawValue>, ErrorObject>;

/// One request as its handler gets it: the session's router, the request, the revision it
/// is served as and, on 2026-07-28, its own client and input rounds.
pub(super) struct Served {
    pub(super) router: Router,
    pub(super) request: RequestContext,
    pub(super) version: ProtocolVersion,
    pub(super) family: Family,
    pub(super) call: Option<Arc<Call>>,
}

impl Served {
    /// The handler's [`Context`].
    pub(super) fn context(self) -> Context {
        let Served {
            router,
            request,
            call,
            ..
        } = self;
        match call {
            Some(call) => Context::stateless(request, router.session, router.server, call),
            None => Context::new(request, router.session, router.server),
        }
    }
}

/// A request on its way to its route.
pub(super) enum Admission {
    /// Admitted in its family.
    Served(Served),
    /// On a connection that has not completed the handshake: the family is decided from the
    /// params' envelope, which the route reads with the params in one walk
    /// ([`RequestEnvelope::read_with`]).
    Undecided {
        router: Router,
        request: RequestContext,
    },
}

type Serve = dyn Fn(Admission, Option<Box<RawValue>>) -> BoxFuture<'static, Outcome> + Send + Sync;

/// What serves a method: an async function of the request and its decoded params.
pub(super) trait Handler<P, T>: Send + Sync + 'static {
    /// Serves one request.
    fn call(
        &self,
        served: Served,
        params: P,
    ) -> impl Future<Output = Result<T, ErrorObject>> + Send + 'static;
}

impl<P, T, F, Fut> Handler<P, T> for F
where
    F: Fn(Served, P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, ErrorObject>> + Send + 'static,
{
    fn call(
        &self,
        served: Served,
        params: P,
    ) -> impl Future<Output = Result<T, ErrorObject>> + Send + 'static {
        self(served, params)
    }
}

/// A method bound to its handler.
pub(super) struct Route {
    /// What the protocol says about the method.
    pub(super) info: MethodInfo,
    serve: Box<Serve>,
}

impl Route {
    /// Serves one request.
    pub(super) fn serve(
        &self,
        admission: Admission,
        params: Option<Box<RawValue>>,
    ) -> BoxFuture<'static, Outcome> {
        (self.serve)(admission, params)
    }
}

/// The routes of the server, by method name.
#[derive(Default)]
pub(super) struct Routes {
    by_name: HashMap<&'static str, Route, FixedKeys>,
}

impl Routes {
    /// Binds `R` to `handler`.
    pub(super) fn route<R>(self, handler: impl Handler<R::Params, R::Result>) -> Self
    where
        R: Request,
        R::Result: Answer,
    {
        self.route_as::<R, R::Result>(handler)
    }

    /// Binds `R` to a `handler` that answers with `T`, a result the method allows besides
    /// its usual one (a task's handle for a task-augmented `tools/call`).
    pub(super) fn route_as<R: Request, T: Answer>(
        self,
        handler: impl Handler<R::Params, T>,
    ) -> Self {
        self.route_with::<R, R::Params, T>(handler)
    }

    /// Binds `R` to a `handler` of params `P`: the members of the method's params the server
    /// acts on, where decoding all of `R::Params` would decode what the envelope already read.
    pub(super) fn route_with<R: Request, P: DeserializeOwned + Send + 'static, T: Answer>(
        mut self,
        handler: impl Handler<P, T>,
    ) -> Self {
        let serve = move |admission: Admission,
                          raw: Option<Box<RawValue>>|
              -> BoxFuture<'static, Outcome> {
            let (served, params) = match admitted::<R, P>(admission, raw.as_deref()) {
                Ok(admitted) => admitted,
                Err(e) => return Box::pin(std::future::ready(Err(e))),
            };
            if served.family == Family::Handshake {
                let run = handler.call(served, params);
                return Box::pin(async move { reply(&run.await?) });
            }
            // Each family has a future of its own, and here the handler's is boxed apart:
            // together they would pass the allocator's fast sizes (1,008 bytes), and
            // glibc's slower path for a larger block costs more than the extra allocation.
            let server = served.router.server.clone();
            let call = served.call.clone();
            let run = Box::pin(handler.call(served, params));
            Box::pin(async move {
                let registry = &server.registry;
                let cache = R::INFO.cacheable.then_some(registry.cache);
                stateless::finish(run, call, &registry.server_info, cache, &registry.state_key)
                    .await
            })
        };
        self.by_name.insert(
            R::METHOD,
            Route {
                info: R::INFO,
                serve: Box::new(serve),
            },
        );
        self
    }

    /// The route of `method`.
    pub(super) fn get(&self, method: &str) -> Option<&Route> {
        self.by_name.get(method)
    }
}

/// The family and the decoded params of an `R` request.
fn admitted<R: Request, P: DeserializeOwned>(
    admission: Admission,
    raw: Option<&RawValue>,
) -> Result<(Served, P), ErrorObject> {
    let (router, request) = match admission {
        Admission::Served(served) => return Ok((served, params(raw, R::METHOD)?)),
        Admission::Undecided { router, request } => (router, request),
    };
    match RequestEnvelope::read_with::<P>(raw) {
        Ok((envelope, decoded)) => {
            let served = router.decide(R::METHOD, Some(&R::INFO), envelope, request)?;
            match served.family {
                Family::Stateless => Ok((served, decoded)),
                // `P` was read without `_meta`, which the handshake family's params keep.
                Family::Handshake => Ok((served, params(raw, R::METHOD)?)),
            }
        }
        // Read again in two walks, so that the refusal is the one each walk gives.
        Err(_) => {
            let envelope = stateless::envelope(raw, R::METHOD)?;
            let served = router.decide(R::METHOD, Some(&R::INFO), envelope, request)?;
            Ok((served, params(raw, R::METHOD)?))
        }
    }
}

/// Reads a request's params; absent params read as `{}` (see `decode_params`), so a missing
/// required member is reported by name.
pub(super) fn params<T: DeserializeOwned>(
    raw: Option<&RawValue>,
    method: &str,
) -> Result<T, ErrorObject> {
    decode_params(raw).map_err(|e| invalid_params(method, e))
}

/// -32602 for the params of a `method` request, saying what is wrong with them.
pub(super) fn invalid_params(method: &str, problem: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::invalid_params(format!("Invalid params for `{method}`: {problem}"))
}

/// Encodes a result.
pub(super) fn reply<T: Serialize>(value: &T) -> Outcome {
    jsonrpc::to_raw(value)
        .map_err(|e| ErrorObject::internal(format!("could not encode the result: {e}")))
}
