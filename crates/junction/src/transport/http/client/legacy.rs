//! The 2024-11-05 HTTP+SSE transport, used as a fallback or on request.

use std::sync::Arc;

use junction_protocol::{ErrorCode, ErrorObject, Message};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::Url;

use super::super::sse::{Event, Parser};
use super::{transport_error, Driver};
use crate::sync::lock;

impl Driver {
    /// Opens the legacy event stream and waits for its `endpoint` event.
    pub(super) async fn open_legacy(self: &Arc<Self>) -> Result<Url, String> {
        let mut headers = self.headers.clone();
        self.authorize(&self.url, &mut headers).await;
        let mut response = self
            .http
            .get(self.url.clone())
            .headers(headers)
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("GET answered {}", response.status()));
        }
        let mut parser = Parser::with_limit(self.max_message);
        let mut early: Vec<Event> = Vec::new();
        let endpoint = loop {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| e.to_string())?
                .ok_or("the stream ended before the endpoint event")?;
            let events = parser.try_feed(&chunk).map_err(|e| e.to_string())?;
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
            .map_err(|e| format!("bad endpoint {endpoint:?}: {e}"))?;
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
        let mut headers = self.headers.clone();
        self.authorize(endpoint, &mut headers).await;
        let result = self
            .http
            .post(endpoint.clone())
            .headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .body(message.encode())
            .send()
            .await;
        match result {
            Ok(r) if r.status().is_success() => {}
            Ok(r) => {
                let status = r.status();
                let body = r.text().await.unwrap_or_default();
                let error = ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("HTTP {status}: {}", body.trim()),
                );
                self.fail(message, error).await;
            }
            Err(e) => self.fail(message, transport_error(&e)).await,
        }
    }
}
