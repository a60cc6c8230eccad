//! One JSON POST to a provider, with a timeout, bounded retries of 429 and 5xx (honouring
//! `retry-after-ms` and `retry-after`), and the provider's error message in a typed error.
//! The answer is read whole ([`Transport::post`]) or as server-sent events as they arrive
//! ([`Transport::post_stream`]); a stream has no overall deadline, only one on silence.
//!
//! The API key travels only in the headers it is given, marked sensitive so that it never
//! appears in `Debug` output or logs.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE, RETRY_AFTER};
use serde_json::Value;

use super::sse::{SseEvent, SseParser};
use super::ModelError;

/// How requests to a provider are made.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    /// How long one request may take, from connecting to the last byte of the answer; for
    /// a streamed answer, how long the stream may stay silent.
    pub timeout: Duration,
    /// How many times a 429 or 5xx answer is retried before giving up.
    pub max_retries: u32,
    /// The wait before the first retry when the provider sends no `retry-after`; it doubles
    /// with each retry.
    pub backoff: Duration,
    /// The longest wait between two attempts, whatever `retry-after` asks.
    pub max_backoff: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            timeout: Duration::from_secs(300),
            max_retries: 3,
            backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
        }
    }
}

/// The most of an unreadable error body quoted in an error.
const BODY_QUOTE_CHARS: usize = 300;

/// A provider's HTTP side.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    client: reqwest::Client,
    /// For streams: a deadline on each read rather than on the whole answer.
    streaming: reqwest::Client,
    settings: HttpSettings,
    provider: &'static str,
    /// Said on 401 / 403.
    key_advice: String,
}

impl Transport {
    /// A transport for `provider`; `key_advice` is what a 401 tells the user to do.
    pub(crate) fn new(
        provider: &'static str,
        settings: HttpSettings,
        key_advice: String,
    ) -> Result<Self, ModelError> {
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .build()
            .map_err(|e| ModelError::Settings {
                provider,
                reason: format!("the HTTP client could not be built: {e}"),
            })?;
        let streaming = reqwest::Client::builder()
            .connect_timeout(settings.timeout)
            .read_timeout(settings.timeout)
            .build()
            .map_err(|e| ModelError::Settings {
                provider,
                reason: format!("the HTTP client could not be built: {e}"),
            })?;
        Ok(Transport {
            client,
            streaming,
            settings,
            provider,
            key_advice,
        })
    }

    /// Posts `body` to `url` with `headers` and returns the JSON answer.
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: HeaderMap,
        body: &Value,
    ) -> Result<Value, ModelError> {
        let response = self.send(&self.client, url, headers, body).await?;
        let text = response
            .text()
            .await
            .map_err(|e| self.unreachable(url, &e))?;
        self.json(&text)
    }

    /// Posts `body` (which asks for a stream) and hands each server-sent event to
    /// `on_event` as it arrives, until it returns `Ok(true)` (the answer is complete) or the
    /// stream ends. A server that answers with plain JSON instead of a stream (some
    /// compatible servers ignore `stream`) has that JSON returned.
    pub(crate) async fn post_stream(
        &self,
        url: &str,
        headers: HeaderMap,
        body: &Value,
        mut on_event: impl FnMut(SseEvent) -> Result<bool, ModelError> + Send,
    ) -> Result<Option<Value>, ModelError> {
        let mut response = self.send(&self.streaming, url, headers, body).await?;
        let is_stream = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_stream {
            let text = response
                .text()
                .await
                .map_err(|e| self.unreachable(url, &e))?;
            return self.json(&text).map(Some);
        }
        let mut parser = SseParser::default();
        let unreadable = |reason: String| ModelError::Malformed {
            provider: self.provider,
            reason: format!("the stream cannot be read: {reason}"),
        };
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.unreachable(url, &e))?
        {
            for event in parser.feed(&chunk).map_err(unreadable)? {
                if on_event(event)? {
                    return Ok(None);
                }
            }
        }
        if let Some(event) = parser.finish() {
            on_event(event)?;
        }
        Ok(None)
    }

    fn json(&self, text: &str) -> Result<Value, ModelError> {
        serde_json::from_str(text).map_err(|e| ModelError::Malformed {
            provider: self.provider,
            reason: format!("the body is not JSON ({e}): {}", quote(text)),
        })
    }

    /// Sends the request until it is answered with success, retrying 429 and 5xx.
    async fn send(
        &self,
        client: &reqwest::Client,
        url: &str,
        headers: HeaderMap,
        body: &Value,
    ) -> Result<reqwest::Response, ModelError> {
        let bytes = serde_json::to_vec(body).map_err(|e| ModelError::Malformed {
            provider: self.provider,
            reason: format!("the request could not be encoded: {e}"),
        })?;
        let mut attempts = 0;
        loop {
            attempts += 1;
            tracing::debug!(provider = self.provider, url, attempts, "model request");
            let response = client
                .post(url)
                .headers(headers.clone())
                .header(CONTENT_TYPE, "application/json")
                .body(bytes.clone())
                .send()
                .await
                .map_err(|e| self.unreachable(url, &e))?;
            let status = response.status();
            if status.is_success() {
                return Ok(response);
            }
            let retry_after = retry_after(response.headers());
            let text = response
                .text()
                .await
                .map_err(|e| self.unreachable(url, &e))?;
            let retryable = status.as_u16() == 429 || status.is_server_error();
            if retryable && attempts <= self.settings.max_retries {
                let wait = retry_after
                    .unwrap_or_else(|| {
                        self.settings
                            .backoff
                            .saturating_mul(1 << (attempts - 1).min(16))
                    })
                    .min(self.settings.max_backoff);
                tracing::warn!(
                    provider = self.provider,
                    status = status.as_u16(),
                    wait_ms = wait.as_millis() as u64,
                    "model request failed; retrying"
                );
                tokio::time::sleep(wait).await;
                continue;
            }
            let advice = match status.as_u16() {
                401 | 403 => Some(self.key_advice.clone()),
                429 => Some("rate limited; try again later".to_owned()),
                _ => None,
            };
            return Err(ModelError::Status {
                provider: self.provider,
                status: status.as_u16(),
                message: error_message(&text),
                attempts,
                advice,
            });
        }
    }

    fn unreachable(&self, url: &str, error: &reqwest::Error) -> ModelError {
        let reason = if error.is_timeout() {
            format!(
                "no answer within {}s (the request timeout)",
                self.settings.timeout.as_secs_f64()
            )
        } else {
            // The chain says why (connection refused, DNS, TLS).
            let mut reason = error.to_string();
            let mut source = std::error::Error::source(error);
            while let Some(s) = source {
                reason.push_str(": ");
                reason.push_str(&s.to_string());
                source = s.source();
            }
            reason
        };
        ModelError::Unreachable {
            provider: self.provider,
            url: url.to_owned(),
            reason,
        }
    }
}

/// A header holding a secret: sensitive, so `Debug` shows it as `Sensitive`.
pub(crate) fn secret_header(
    provider: &'static str,
    name: HeaderName,
    value: &str,
) -> Result<(HeaderName, HeaderValue), ModelError> {
    let mut value = HeaderValue::from_str(value).map_err(|_| ModelError::Settings {
        provider,
        reason: "the API key holds characters a header cannot carry".to_owned(),
    })?;
    value.set_sensitive(true);
    Ok((name, value))
}

/// How long the provider asks to wait: OpenAI's `retry-after-ms` (milliseconds) when
/// present, else `retry-after` (seconds).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let millis = headers
        .get("retry-after-ms")
        .and_then(parse_seconds)
        .map(|d| d / 1000);
    millis.or_else(|| headers.get(RETRY_AFTER).and_then(parse_seconds))
}

/// `retry-after` in seconds (the HTTP-date form is not used by model APIs).
fn parse_seconds(value: &HeaderValue) -> Option<Duration> {
    let seconds: f64 = value.to_str().ok()?.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// The provider's message from an error body: `error.message` (Anthropic and OpenAI both
/// use it), else `error` as a string, else the start of the body.
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    match error {
        Some(Value::Object(e)) => match (e.get("message"), e.get("type")) {
            (Some(Value::String(m)), Some(Value::String(t))) => format!("{m} ({t})"),
            (Some(Value::String(m)), _) => m.clone(),
            _ => quote(body),
        },
        Some(Value::String(m)) => m.clone(),
        _ if body.trim().is_empty() => "no body".to_owned(),
        _ => quote(body),
    }
}

fn quote(body: &str) -> String {
    let mut quoted: String = body.chars().take(BODY_QUOTE_CHARS).collect();
    if body.chars().count() > BODY_QUOTE_CHARS {
        quoted.push('…');
    }
    format!("{quoted:?}")
}

/// `base` and `path` joined by exactly one `/`.
pub(crate) fn join(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// Checks that a base URL is an http(s) URL.
pub(crate) fn check_base(provider: &'static str, base: &str) -> Result<(), ModelError> {
    match reqwest::Url::parse(base) {
        Ok(url) if matches!(url.scheme(), "http" | "https") => Ok(()),
        _ => Err(ModelError::Settings {
            provider,
            reason: format!("the base URL {base:?} is not an http(s) URL"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_come_from_the_documented_error_object() {
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
            ),
            "invalid x-api-key (authentication_error)"
        );
        assert_eq!(
            error_message(r#"{"error":{"message":"Incorrect API key","code":null}}"#),
            "Incorrect API key"
        );
        assert_eq!(
            error_message(r#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(error_message("Bad Gateway"), r#""Bad Gateway""#);
        assert_eq!(error_message(""), "no body");
    }

    #[test]
    fn retry_after_is_read_in_seconds() {
        assert_eq!(
            parse_seconds(&HeaderValue::from_static("2")),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            parse_seconds(&HeaderValue::from_static("0.5")),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            parse_seconds(&HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT")),
            None
        );
    }

    #[test]
    fn retry_after_ms_wins_over_retry_after() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }

    #[test]
    fn urls_are_joined_with_one_slash_and_checked() {
        assert_eq!(
            join("http://h/v1/", "/chat/completions"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            join("https://api.anthropic.com", "v1/messages"),
            "https://api.anthropic.com/v1/messages"
        );
        assert!(check_base("p", "http://127.0.0.1:1").is_ok());
        assert!(check_base("p", "localhost:11434").is_err());
    }
}
