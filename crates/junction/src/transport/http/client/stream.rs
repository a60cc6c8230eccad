//! Event streams: a request's stream with `Last-Event-ID` resumption, and the standalone GET stream.

use std::sync::Arc;
use std::time::Duration;

use junction_protocol::RequestId;
use reqwest::header::ACCEPT;
use reqwest::StatusCode;
use tokio::sync::oneshot;

use super::super::names;
use super::super::sse::Parser;
use super::{Driver, PostError};
use crate::sync::lock;
use crate::transport::{FrameError, Inbound, TransportError};

/// How long to wait before reconnecting when the server named no `retry` delay.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// How many reconnections in a row may fail before a stream is given up.
const MAX_RECONNECTS: u32 = 5;
/// How long sending waits, after `notifications/initialized`, for the standalone stream to
/// be established (a server may drop what it has for a stream that is not open yet).
const STANDALONE_WAIT: Duration = Duration::from_secs(2);

impl Driver {
    /// Opens the standalone stream of the current session and waits for it to be established
    /// (or refused) before anything else is sent: servers that drop messages while no GET
    /// stream is open would otherwise lose what the next request causes.
    pub(super) async fn open_standalone(self: &Arc<Self>) {
        let (ready, established) = oneshot::channel();
        let generation = lock(&self.state).generation;
        tokio::spawn(self.clone().standalone(ready, generation));
        let _ = tokio::time::timeout(STANDALONE_WAIT, established).await;
    }

    /// Reads a request's event stream until its response, resuming it when it breaks.
    /// With `renew`, a `404` to resuming returns the session that is gone instead of failing
    /// the request, so that the caller can start a new one and send the request again.
    pub(super) async fn read_request_stream(
        self: &Arc<Self>,
        id: RequestId,
        response: reqwest::Response,
        renew: bool,
    ) -> Option<String> {
        let mut cursor = StreamCursor::default();
        let mut response = Some(response);
        let mut failures = 0;
        loop {
            if let Some(r) = response.take() {
                let progressed = self.read_events(r, &mut cursor, Some(&id)).await;
                if cursor.answered || self.closing.is_cancelled() {
                    return None;
                }
                failures = if progressed { 0 } else { failures + 1 };
            }
            if lock(&self.state).cancelled.remove(&id) {
                return None;
            }
            let Some(last) = cursor.last_id.clone() else {
                let error = TransportError::StreamEnded {
                    url: self.url.to_string(),
                    detail: Some("without an event id to resume from".to_owned()),
                };
                self.fail_id(&id, error).await;
                return None;
            };
            if failures >= MAX_RECONNECTS {
                let error = TransportError::StreamEnded {
                    url: self.url.to_string(),
                    detail: Some(format!(
                        "it could not be resumed after {MAX_RECONNECTS} attempts"
                    )),
                };
                self.fail_id(&id, error).await;
                return None;
            }
            tokio::select! {
                _ = tokio::time::sleep(cursor.retry) => {}
                _ = self.closing.cancelled() => return None,
            }
            let session = lock(&self.state).session_id.clone();
            match self.get(Some(&last)).await {
                Ok(r) if r.status().is_success() => response = Some(r),
                Ok(r) if r.status() == StatusCode::NOT_FOUND => {
                    if let Some(session) = session.filter(|_| renew) {
                        tracing::debug!(%session, "HTTP 404 while resuming a request's stream");
                        return Some(session);
                    }
                    let error = TransportError::SessionEnded {
                        url: self.url.to_string(),
                        detail: None,
                    };
                    self.fail_id(&id, error).await;
                    return None;
                }
                Ok(r) => {
                    tracing::debug!(status = %r.status(), "resuming an event stream failed");
                    failures += 1;
                }
                Err(e) => {
                    tracing::debug!(error = %e.at(&self.url), "resuming an event stream failed");
                    failures += 1;
                }
            }
        }
    }

    /// Reads events until the stream ends (or, for a request stream, until its response).
    /// Returns whether anything arrived.
    pub(super) async fn read_events(
        &self,
        mut response: reqwest::Response,
        cursor: &mut StreamCursor,
        request: Option<&RequestId>,
    ) -> bool {
        let mut parser = Parser::with_limit(self.max_message);
        let mut progressed = false;
        loop {
            let chunk = tokio::select! {
                chunk = response.chunk() => chunk,
                _ = self.closing.cancelled() => return progressed,
            };
            let chunk = match chunk {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return progressed,
                Err(e) => {
                    tracing::debug!(error = %e, "event stream broke");
                    return progressed;
                }
            };
            let events = match parser.try_feed(&chunk) {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!(error = %e, "dropping an unreadable event stream");
                    let Some(id) = request else {
                        return progressed;
                    };
                    // The event over the limit is most likely the response; resuming the
                    // stream would only replay it, so the request fails now.
                    let refused = FrameError::TooLarge {
                        size: self.max_message.saturating_add(1),
                        limit: self.max_message,
                        response_to: Some(id.clone()),
                    };
                    let _ = self
                        .incoming
                        .send(Inbound::Refused(Box::new(refused)))
                        .await;
                    cursor.answered = true;
                    return true;
                }
            };
            for event in events {
                progressed = true;
                if let Some(id) = event.id.as_ref().filter(|id| !id.is_empty()) {
                    cursor.last_id = Some(id.clone());
                }
                if let Some(retry) = event.retry {
                    cursor.retry = retry;
                }
                if !event.is_message() || event.data.trim().is_empty() {
                    continue;
                }
                let peek = self.deliver(event.data.into_bytes()).await;
                let answered = peek.is_some_and(|p| {
                    p.method.is_none() && p.id.is_some() && p.id.as_ref() == request
                });
                if answered {
                    cursor.answered = true;
                    return true;
                }
            }
        }
    }

    pub(super) async fn get(
        &self,
        last_event_id: Option<&str>,
    ) -> Result<reqwest::Response, PostError> {
        self.send_authorized("GET", &self.url, self.common_headers(), |headers| {
            let request = self
                .http
                .get(self.url.clone())
                .headers(headers)
                .header(ACCEPT, "text/event-stream");
            match last_event_id {
                Some(last) => request.header(names::LAST_EVENT_ID, last),
                None => request,
            }
        })
        .await
    }

    /// The standalone GET stream: opened after initialization, reopened when it breaks.
    /// `ready` fires once the first attempt is answered (established or refused).
    /// The stream ends with its session (`generation`). When it was open and could not be
    /// reopened because nothing accepts connections at the URL any more, the server is gone:
    /// the connection breaks ([`Inbound::Broken`]) naming why, as a stdio connection ends
    /// with its process, and its requests fail at once instead of waiting for answers that
    /// cannot come.
    pub(super) async fn standalone(self: Arc<Self>, ready: oneshot::Sender<()>, generation: u64) {
        let mut cursor = StreamCursor::default();
        let mut failures = 0;
        let mut opened_once = false;
        let mut ready = Some(ready);
        let mut unreachable = None;
        while failures < MAX_RECONNECTS
            && !self.closing.is_cancelled()
            && lock(&self.state).generation == generation
        {
            let attempt = self.get(cursor.last_id.as_deref()).await;
            if let Some(ready) = ready.take() {
                let _ = ready.send(());
            }
            unreachable = match &attempt {
                Err(PostError::Http(e)) if e.is_connect() => {
                    Some(super::transport_error(&self.url, e))
                }
                _ => None,
            };
            match attempt {
                Ok(r) if r.status().is_success() => {
                    opened_once = true;
                    let progressed = self.read_events(r, &mut cursor, None).await;
                    failures = if progressed { 0 } else { failures + 1 };
                }
                Ok(r) if r.status() == StatusCode::METHOD_NOT_ALLOWED && !opened_once => {
                    tracing::debug!("the server offers no standalone GET stream");
                    return;
                }
                Ok(r) => {
                    tracing::debug!(status = %r.status(), "the standalone GET stream was refused");
                    if !opened_once {
                        return;
                    }
                    failures += 1;
                }
                Err(e) => {
                    tracing::debug!(error = %e.at(&self.url), "the standalone GET stream failed");
                    failures += 1;
                }
            }
            if failures >= MAX_RECONNECTS {
                break;
            }
            tokio::select! {
                _ = tokio::time::sleep(cursor.retry) => {}
                _ = self.closing.cancelled() => return,
            }
        }
        let gone = opened_once
            && !self.closing.is_cancelled()
            && lock(&self.state).generation == generation;
        if let Some(error) = unreachable.filter(|_| gone) {
            tracing::debug!(%error, "the server is gone: the standalone stream cannot be reopened");
            let _ = self.incoming.send(Inbound::Broken(Box::new(error))).await;
            self.closing.cancel();
        }
    }
}

/// Where a stream stands: the id to resume after, the delay before reconnecting.
pub(super) struct StreamCursor {
    last_id: Option<String>,
    retry: Duration,
    pub(super) answered: bool,
}

impl Default for StreamCursor {
    fn default() -> Self {
        StreamCursor {
            last_id: None,
            retry: DEFAULT_RETRY,
            answered: false,
        }
    }
}
