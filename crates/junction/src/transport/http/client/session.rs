//! The session: starting a new one after a `404`, and ending it with `DELETE`.

use std::sync::Arc;

use junction_protocol::{ErrorObject, Message};
use reqwest::header::CONTENT_TYPE;
use serde::Deserialize;

use super::super::names;
use super::super::sse::{Event, Parser};
use super::{with_session, Driver};
use crate::sync::lock;
use crate::transport::{Inbound, TransportEvent};

impl Driver {
    /// Starts a new session in place of `expired`: replays the recorded `initialize` without
    /// a session id, sends `notifications/initialized` and reopens the standalone stream.
    /// Does nothing when another message already replaced that session. Other messages keep
    /// using the expired session (and wait here on their `404`) until the new one is ready.
    pub(super) async fn reinitialize(self: &Arc<Self>, expired: &str) -> Result<(), String> {
        let _one_at_a_time = self.reinitializing.lock().await;
        let (handshake, expected) = {
            let state = lock(&self.state);
            if state.session_id.as_deref() != Some(expired) {
                return Ok(());
            }
            let handshake = state
                .handshake
                .clone()
                .ok_or("no initialize request was recorded")?;
            (handshake, state.version.clone())
        };
        tracing::info!(session = %expired, "the server ended the session (404); starting a new one");
        let headers = self.headers.clone();
        let response = self
            .post_raw(&self.url, headers.clone(), &handshake)
            .await
            .map_err(|e| format!("initialize: {}", e.at(&self.url)))?;
        if !response.status().is_success() {
            return Err(format!("initialize answered HTTP {}", response.status()));
        }
        let session = response
            .headers()
            .get(names::SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let result = read_single_response(response, self.max_message).await?;
        let version = result
            .get("protocolVersion")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        if version != expected {
            return Err(format!(
                "the new session negotiated {version:?} instead of {expected:?}"
            ));
        }
        let headers = with_session(headers, session.as_deref(), version.as_deref());
        let initialized = Message::Notification(junction_protocol::Notification {
            method: "notifications/initialized".to_owned(),
            params: None,
        });
        let response = self
            .post_raw(&self.url, headers, &initialized)
            .await
            .map_err(|e| format!("notifications/initialized: {}", e.at(&self.url)))?;
        if !response.status().is_success() {
            return Err(format!(
                "notifications/initialized answered HTTP {}",
                response.status()
            ));
        }
        {
            let mut state = lock(&self.state);
            state.session_id = session;
            state.generation += 1;
        }
        self.open_standalone().await;
        self.report_new_session(result).await;
        Ok(())
    }

    /// Hands the session the new session's initialize result
    /// ([`TransportEvent::Reinitialized`]).
    async fn report_new_session(&self, result: serde_json::Value) {
        let result = match serde_json::from_value(result) {
            Ok(result) => result,
            Err(e) => {
                tracing::warn!(error = %e, "the new session's initialize result is malformed; not reported");
                return;
            }
        };
        let event = TransportEvent::Reinitialized(Box::new(result));
        let _ = self.incoming.send(Inbound::Event(event)).await;
    }

    /// Ends the session on the server.
    pub(super) async fn delete_session(&self) {
        if lock(&self.state).legacy.is_some() {
            return;
        }
        let Some(id) = lock(&self.state).session_id.clone() else {
            return;
        };
        let result = self
            .send_authorized("DELETE", &self.url, self.common_headers(), |headers| {
                self.http.delete(self.url.clone()).headers(headers)
            })
            .await;
        match result {
            Ok(r) => tracing::debug!(session = %id, status = %r.status(), "session deleted"),
            Err(e) => {
                tracing::debug!(session = %id, error = %e.at(&self.url), "could not delete the session");
            }
        }
    }
}

/// The `result` of the one response an answer carries, as a JSON body or on an event
/// stream (other messages on the stream are skipped: nothing is pending on a new session).
async fn read_single_response(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<serde_json::Value, String> {
    #[derive(Deserialize)]
    struct Answer {
        method: Option<String>,
        result: Option<serde_json::Value>,
        error: Option<ErrorObject>,
    }
    fn read(frame: &[u8]) -> Option<Result<serde_json::Value, String>> {
        let answer: Answer = serde_json::from_slice(frame).ok()?;
        if answer.method.is_some() {
            return None;
        }
        Some(match (answer.result, answer.error) {
            (Some(result), None) => Ok(result),
            (_, Some(error)) => Err(format!("initialize failed: {error}")),
            (None, None) => Err("initialize answered neither a result nor an error".to_owned()),
        })
    }
    let sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !sse {
        let body = match super::read_body(response, limit).await {
            Ok(Ok(body)) => body,
            Ok(Err(super::TooLarge(size))) => {
                return Err(format!(
                    "the initialize answer was larger than {} ({size} bytes or more arrived)",
                    crate::transport::human_bytes(limit)
                ))
            }
            Err(e) => return Err(e.to_string()),
        };
        return read(&body).unwrap_or_else(|| {
            Err("initialize answered a body that is not its response".to_owned())
        });
    }
    let mut parser = Parser::with_limit(limit);
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        let events = parser.try_feed(&chunk).map_err(|e| e.to_string())?;
        for event in events.into_iter().filter(Event::is_message) {
            if let Some(answer) = read(event.data.as_bytes()) {
                return answer;
            }
        }
    }
    Err("the initialize stream ended before its response".to_owned())
}
