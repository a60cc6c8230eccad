//! Sending a message: the POST, and reading its answer as one JSON body or an event stream.

use std::sync::Arc;

use junction_protocol::{ErrorObject, Message};
use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::{StatusCode, Url};
use serde::Deserialize;

use super::super::names;
use super::{read_body, transport_error, Driver, PostError, TooLarge, MAX_AUTHORIZATIONS};
use crate::sync::lock;
use crate::transport::{FrameError, Inbound, TransportError};

impl Driver {
    /// Sends the request `build` makes from `headers` with this client's credentials added,
    /// and answers the authorization challenges of its response: a `401` or `403` starts
    /// [`OAuthClient::challenged`](crate::auth::OAuthClient::challenged) (a refresh, a login,
    /// a step-up, or the server's new DPoP nonce) and the request is sent again, at most
    /// [`MAX_AUTHORIZATIONS`] times. Every request of the client goes through here (the
    /// POSTs, the GET streams, the DELETE, the legacy transport), so each one keeps the
    /// server's latest DPoP nonce: a stream reopened after the nonce rotated recovers as a
    /// POST does.
    pub(super) async fn send_authorized(
        &self,
        method: &str,
        url: &Url,
        headers: HeaderMap,
        build: impl Fn(HeaderMap) -> reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, PostError> {
        let mut challenges = 0;
        loop {
            let mut headers = headers.clone();
            let sent = self.authorize(method, url, &mut headers).await;
            let response = build(headers).send().await.map_err(PostError::Http)?;
            let status = response.status();
            let Some(oauth) = &self.oauth else {
                return Ok(response);
            };
            oauth.observe(url, response.headers());
            if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
                || challenges == MAX_AUTHORIZATIONS
            {
                return Ok(response);
            }
            challenges += 1;
            let challenge = response
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            oauth
                .challenged(status, challenge.as_deref(), sent.as_deref())
                .await
                .map_err(PostError::Auth)?;
        }
    }

    pub(super) async fn post_raw(
        &self,
        url: &Url,
        headers: HeaderMap,
        message: &Message,
    ) -> Result<reqwest::Response, PostError> {
        let body = message.encode();
        self.send_authorized("POST", url, headers, |headers| {
            self.http
                .post(url.clone())
                .headers(headers)
                .header(ACCEPT, "application/json, text/event-stream")
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone())
        })
        .await
    }

    /// `initialize`: POST it, or fall back to the legacy transport.
    pub(super) async fn initialize(self: &Arc<Self>, message: Message) {
        if self.legacy_only {
            return match self.open_legacy().await {
                Ok(endpoint) => self.post_legacy(&endpoint, &message).await,
                Err(error) => self.fail(&message, error).await,
            };
        }
        let response = match self
            .post_raw(&self.url, self.common_headers(), &message)
            .await
        {
            Ok(response) => response,
            Err(e) => return self.fail(&message, e.at(&self.url)).await,
        };
        if matches!(
            response.status(),
            StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
        ) {
            tracing::debug!(status = %response.status(), "initialize refused; trying the 2024-11-05 HTTP+SSE transport");
            match self.open_legacy().await {
                Ok(endpoint) => {
                    self.post_legacy(&endpoint, &message).await;
                    return;
                }
                Err(error) => {
                    tracing::debug!(%error, "the legacy transport is not offered either");
                }
            }
        }
        if let Some(id) = response
            .headers()
            .get(names::SESSION_ID)
            .and_then(|v| v.to_str().ok())
        {
            lock(&self.state).session_id = Some(id.to_owned());
        }
        self.answer(&message, response, false).await;
    }

    /// POSTs one message and handles its answer; returns whether the server accepted it.
    /// A `404` for the session, to the POST or to the `GET` resuming the request's stream,
    /// starts a new one and sends the message again, once.
    pub(super) async fn post(self: &Arc<Self>, message: &Message) -> bool {
        let mut retried = false;
        loop {
            let headers = self.common_headers();
            let session = headers
                .get(names::SESSION_ID)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let response = match self.post_raw(&self.url, headers, message).await {
                Ok(response) => response,
                Err(e) => {
                    self.fail(message, e.at(&self.url)).await;
                    return false;
                }
            };
            if response.status() == StatusCode::NOT_FOUND && !retried {
                if let Some(session) = session {
                    retried = true;
                    match self.reinitialize(&session).await {
                        Ok(()) => continue,
                        Err(reason) => {
                            tracing::warn!(%reason, "could not start a new session");
                        }
                    }
                }
            }
            match self.answer(message, response, !retried).await {
                Answered::Done(accepted) => return accepted,
                Answered::SessionGone(session) => {
                    retried = true;
                    if let Err(reason) = self.reinitialize(&session).await {
                        let error = TransportError::SessionEnded {
                            url: self.url.to_string(),
                            detail: Some(format!("a new session could not be started: {reason}")),
                        };
                        self.fail(message, error).await;
                        return true;
                    }
                }
            }
        }
    }

    /// Reads the answer to a POST. With `renew`, a request whose stream cannot be resumed
    /// because the session is gone is left to the caller to send again.
    pub(super) async fn answer(
        self: &Arc<Self>,
        message: &Message,
        response: reqwest::Response,
        renew: bool,
    ) -> Answered {
        let status = response.status();
        if !status.is_success() {
            let session_ended =
                status == StatusCode::NOT_FOUND && lock(&self.state).session_id.is_some();
            let content_type = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            // An error body is read only as far as the message limit; beyond it, it is cut.
            let body = match read_body(response, self.max_message).await {
                Ok(Ok(body)) => body,
                Ok(Err(_)) | Err(_) => Vec::new(),
            };
            match serde_json::from_slice::<ErrorBody>(&body) {
                _ if session_ended => {
                    let error = TransportError::SessionEnded {
                        url: self.url.to_string(),
                        detail: None,
                    };
                    self.fail(message, error).await;
                }
                // The server's own answer, carried by an error status (2026-07-28 does so).
                Ok(ErrorBody { error }) => self.refused(message, error).await,
                Err(_) => {
                    let error = TransportError::status(
                        self.url.as_str(),
                        status.as_u16(),
                        content_type.as_deref(),
                        &body,
                    );
                    self.fail(message, error).await;
                }
            }
            return Answered::Done(false);
        }
        let Message::Request(request) = message else {
            // A body on the answer to a notification or response carries nothing to read.
            return Answered::Done(true);
        };
        let sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if sse {
            if let Some(session) = self
                .read_request_stream(request.id.clone(), response, renew)
                .await
            {
                return Answered::SessionGone(session);
            }
        } else {
            match read_body(response, self.max_message).await {
                Ok(Err(TooLarge(size))) => {
                    let refused = FrameError::TooLarge {
                        size,
                        limit: self.max_message,
                        response_to: Some(request.id.clone()),
                    };
                    let _ = self
                        .incoming
                        .send(Inbound::Refused(Box::new(refused)))
                        .await;
                }
                Ok(Ok(body)) if !body.is_empty() => {
                    let peek = self.deliver(body).await;
                    let answered = peek
                        .is_some_and(|p| p.method.is_none() && p.id.as_ref() == Some(&request.id));
                    if !answered {
                        let error = self.exchange(
                            "the server answered the request with a JSON body that is not its response",
                        );
                        self.fail(message, error).await;
                    }
                }
                Ok(_) => {
                    let error = self.exchange("the server answered the request with an empty body");
                    self.fail(message, error).await;
                }
                Err(e) => self.fail(message, transport_error(&self.url, &e)).await,
            }
        }
        Answered::Done(true)
    }
}

/// How the answer to a POST ended.
pub(super) enum Answered {
    /// Read to its end (or failed, and the failure reported); whether the server accepted
    /// the message.
    Done(bool),
    /// The request's stream broke and the server answered `404` to resuming it: the session
    /// named here is gone, and the request was neither answered nor failed.
    SessionGone(String),
}

#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorObject,
}
