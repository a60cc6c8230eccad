//! Resources and resource templates as async functions (`resources/list`,
//! `resources/templates/list`, `resources/read`; every handshake revision).
//!
//! A read handler takes a [`ReadRequest`] (the URI, the variables a template matched, the
//! [`Context`]) and returns anything [`IntoReadResult`]: a `String` (text, with the declared
//! MIME type), a [`Blob`], [`ResourceContents`], a `Vec` of them, a full
//! [`ReadResourceResult`], or `Result<_, ErrorObject>` to answer with an error such as
//! [`not_found`].

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use junction_protocol::content::Annotations;
use junction_protocol::lifecycle::Icon;
use junction_protocol::resources::{
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use junction_protocol::{ErrorCode, ErrorObject};
use serde_json::json;

use super::completion::{CompleteRequest, Completer};
use super::Context;
use crate::session::BoxFuture;
use crate::uri_template::{TemplateError, UriTemplate};

/// Binary contents, already base64-encoded (sent as `blob`).
#[derive(Debug, Clone, PartialEq)]
pub struct Blob(pub String);

/// A request to read one resource.
#[derive(Debug, Clone)]
pub struct ReadRequest {
    /// The URI asked for.
    pub uri: String,
    /// The variables a template matched (empty for a static resource).
    pub variables: BTreeMap<String, String>,
    /// The handler's context.
    pub context: Context,
}

impl ReadRequest {
    /// A matched template variable.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.variables.get(name).map(String::as_str)
    }

    /// A clone of the server's state of type `S` (see [`super::State`]).
    pub fn state<S: Clone + Send + Sync + 'static>(&self) -> Option<S> {
        self.context.state()
    }
}

/// The JSON-RPC error for a URI no resource answers to: -32002 with `data: {"uri": ...}`.
pub fn not_found(uri: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, "Resource not found")
        .with_data(json!({ "uri": uri }))
}

/// What a read handler may return.
pub trait IntoReadResult {
    /// The result for `uri`; `mime_type` is the one the resource declared.
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject>;
}

impl IntoReadResult for ReadResourceResult {
    fn into_read_result(self, _: &str, _: Option<&str>) -> Result<ReadResourceResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoReadResult for Vec<ResourceContents> {
    fn into_read_result(self, _: &str, _: Option<&str>) -> Result<ReadResourceResult, ErrorObject> {
        Ok(ReadResourceResult::new(self))
    }
}

impl IntoReadResult for ResourceContents {
    fn into_read_result(self, _: &str, _: Option<&str>) -> Result<ReadResourceResult, ErrorObject> {
        Ok(ReadResourceResult::new(vec![self]))
    }
}

impl IntoReadResult for String {
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        Ok(ReadResourceResult::new(vec![ResourceContents::Text {
            uri: uri.to_owned(),
            mime_type: mime_type.map(str::to_owned),
            text: self,
            meta: None,
        }]))
    }
}

impl IntoReadResult for &'static str {
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        self.to_owned().into_read_result(uri, mime_type)
    }
}

impl IntoReadResult for Blob {
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        Ok(ReadResourceResult::new(vec![ResourceContents::Blob {
            uri: uri.to_owned(),
            mime_type: mime_type.map(str::to_owned),
            blob: self.0,
            meta: None,
        }]))
    }
}

impl<T: IntoReadResult> IntoReadResult for Result<T, ErrorObject> {
    fn into_read_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        self.and_then(|t| t.into_read_result(uri, mime_type))
    }
}

pub(super) type ReadFn = dyn Fn(ReadRequest, Option<String>) -> BoxFuture<'static, Result<ReadResourceResult, ErrorObject>>
    + Send
    + Sync;

fn erase<F, Fut, R>(handler: F) -> Arc<ReadFn>
where
    F: Fn(ReadRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoReadResult,
{
    Arc::new(move |request: ReadRequest, mime_type: Option<String>| {
        let uri = request.uri.clone();
        let future = handler(request);
        Box::pin(async move { future.await.into_read_result(&uri, mime_type.as_deref()) })
    })
}

/// A resource ready to register: its description and read function.
#[derive(Clone)]
pub struct ResourceDef {
    pub(super) resource: Resource,
    pub(super) read: Arc<ReadFn>,
}

impl std::fmt::Debug for ResourceDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceDef")
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

/// Declares the resource at `uri`, called `name`, read by `handler`.
pub fn resource<F, Fut, R>(
    uri: impl Into<String>,
    name: impl Into<String>,
    handler: F,
) -> ResourceDef
where
    F: Fn(ReadRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoReadResult,
{
    ResourceDef {
        resource: Resource::new(uri, name),
        read: erase(handler),
    }
}

impl ResourceDef {
    /// Sets the display name.
    pub fn title(mut self, text: impl Into<String>) -> Self {
        self.resource.title = Some(text.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.resource.description = Some(text.into());
        self
    }

    /// Sets the MIME type (also given to text and [`Blob`] results).
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.resource.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the size in bytes.
    pub fn size(mut self, size: u64) -> Self {
        self.resource.size = Some(size);
        self
    }

    /// Sets the annotations.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.resource.annotations = Some(annotations);
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.resource.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// The description as it will be listed.
    pub fn definition(&self) -> &Resource {
        &self.resource
    }
}

/// A resource template ready to register: its description, parsed template, read function
/// and the completers of its variables.
#[derive(Clone)]
pub struct TemplateDef {
    pub(super) template: ResourceTemplate,
    pub(super) parsed: Result<Arc<UriTemplate>, TemplateError>,
    pub(super) read: Arc<ReadFn>,
    pub(super) completers: BTreeMap<String, Arc<Completer>>,
}

impl std::fmt::Debug for TemplateDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TemplateDef")
            .field("template", &self.template)
            .finish_non_exhaustive()
    }
}

/// Declares a resource template (RFC 6570, e.g. `notes://{id}`) called `name`; `handler`
/// reads every URI the template matches and finds the values in [`ReadRequest::variables`].
pub fn template<F, Fut, R>(
    uri_template: impl Into<String>,
    name: impl Into<String>,
    handler: F,
) -> TemplateDef
where
    F: Fn(ReadRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoReadResult,
{
    let template = ResourceTemplate::new(uri_template, name);
    TemplateDef {
        parsed: UriTemplate::parse(&template.uri_template).map(Arc::new),
        template,
        read: erase(handler),
        completers: BTreeMap::new(),
    }
}

impl TemplateDef {
    /// Sets the display name.
    pub fn title(mut self, text: impl Into<String>) -> Self {
        self.template.title = Some(text.into());
        self
    }

    /// Sets the description.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.template.description = Some(text.into());
        self
    }

    /// Sets the MIME type of every matching resource (also given to text and [`Blob`]
    /// results).
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.template.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the annotations.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.template.annotations = Some(annotations);
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.template.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Completes the template variable `variable` with `completer` (`completion/complete`
    /// with a `ref/resource`).
    pub fn complete<F, Fut>(mut self, variable: impl Into<String>, completer: F) -> Self
    where
        F: Fn(CompleteRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completers
            .insert(variable.into(), super::completion::erase(completer));
        self
    }

    /// The description as it will be listed.
    pub fn definition(&self) -> &ResourceTemplate {
        &self.template
    }
}
