//! The 2024-11-05 HTTP+SSE transport, used as a fallback or on request.

use std::sync::Arc;

use junction_protocol::Message;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::Url;

use super::super::sse::{Event, Parser};
use super::Driver;
use crate::sync::lock;
use crate::transport::TransportError;

impl Driver {
    /// Opens the legacy event stream and waits for its `endpoint` event.
    pub(super) async fn open_legacy(self: &Arc<Self>) -> Result<Url, TransportError> {
        let broke = |reason: String| {
            self.exchange(format!(
                "the HTTP+SSE endpoint could not be opened: {reason}"
            ))
        };
        let mut response = self
            .send_authorized("GET", &self.url, self.headers.clone(), |headers| {
                self.http
                    .get(self.url.clone())
                    .headers(headers)
                    .header(ACCEPT, "text/event-stream")
            })
            .await
            .map_err(|e| e.at(&self.url))?;
        if !response.status().is_success() {
            let content_type = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let status = response.status().as_u16();
            let body = super::read_body(response, self.max_message)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            return Err(TransportError::status(
                self.url.as_str(),
                status,
                content_type.as_deref(),
                &body,
            ));
        }
        let mut parser = Parser::with_limit(self.max_message);
        let mut early: Vec<Event> = Vec::new();
        let endpoint = loop {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| broke(e.to_string()))?
                .ok_or_else(|| broke("the stream ended before the endpoint event".to_owned()))?;
            let events = parser.try_feed(&chunk).map_err(|e| broke(e.to_string()))?;
            let mut found = None;
            for event in events {
                if found.is_none() && event.event.as_deref() == Some("endpoint") {
                    found = Some(event.data.trim().to_owned());
                } else {
                    early.push(event);
                }
            }
            if let Some(found) = found {
                break found;
            }
        };
        let endpoint = self
            .url
            .join(&endpoint)
            .map_err(|e| broke(format!("bad endpoint {endpoint:?}: {e}")))?;
        lock(&self.state).legacy = Some(endpoint.clone());
        let driver = self.clone();
        tokio::spawn(async move {
            for event in early
                .into_iter()
                .filter(|e| e.is_message() && !e.data.trim().is_empty())
            {
                driver.deliver(event.data.into_bytes()).await;
            }
            driver.read_legacy(response, parser).await;
            // The legacy session lives and dies with its stream.
            driver.closing.cancel();
        });
        Ok(endpoint)
    }

    /// Reads the legacy stream: every message event goes to the session. The old transport
    /// has no resumption, so the session ends with the stream.
    pub(super) async fn read_legacy(&self, mut response: reqwest::Response, mut parser: Parser) {
        loop {
            let chunk = tokio::select! {
                chunk = response.chunk() => chunk,
                _ = self.closing.cancelled() => return,
            };
            let Ok(Some(chunk)) = chunk else { return };
            let Ok(events) = parser.try_feed(&chunk) else {
                return;
            };
            for event in events {
                if event.is_message() && !event.data.trim().is_empty() {
                    self.deliver(event.data.into_bytes()).await;
                }
            }
        }
    }

    pub(super) async fn post_legacy(&self, endpoint: &Url, message: &Message) {
        let body = message.encode();
        let result = self
            .send_authorized("POST", endpoint, self.headers.clone(), |headers| {
                self.http
                    .post(endpoint.clone())
                    .headers(headers)
                    .header(CONTENT_TYPE, "application/json")
                    .body(body.clone())
            })
            .await;
        match result {
            Ok(r) if r.status().is_success() => {}
            Ok(r) => {
                let status = r.status().as_u16();
                let content_type = r
                    .headers()
                    .get(CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let body = r.bytes().await.unwrap_or_default();
                let error = TransportError::status(
                    endpoint.as_str(),
                    status,
                    content_type.as_deref(),
                    &body,
                );
                self.fail(message, error).await;
            }
            Err(e) => self.fail(message, e.at(endpoint)).await,
        }
    }
}
