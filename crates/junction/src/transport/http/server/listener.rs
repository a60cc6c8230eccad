//! Accepting connections: a cap on how many are open at once, and hyper's header timeout.
//!
//! Every open connection costs a file descriptor, and a process has a fixed number of them
//! (often 1,024). A peer that opens sockets and sends nothing would otherwise hold them all
//! and lock every legitimate client out. So:
//!
//! - at most [`ConnectionLimits::max_connections`] connections are served at once; one
//!   beyond the cap is answered `503 Service Unavailable` with `Retry-After` once its
//!   request head has arrived (HTTP clients reject an answer that comes before their
//!   request), or after [`REFUSAL_WAIT`], and closed. At most [`REFUSALS`] connections wait
//!   for that answer; any more are closed at once;
//! - a connection must deliver a request's headers within
//!   [`ConnectionLimits::header_timeout`] of the server starting to wait for them, or it is
//!   closed. Hyper starts that clock whenever it waits for a request head, the next one on a
//!   kept-alive connection included, so the same timeout is the keep-alive idle timeout. A
//!   connection busy with a response (an open SSE stream) is not idle and stays.
//!
//! Once accepted, a connection is served by hyper's HTTP/1 server with the axum router.

use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// The connection limits of [`super::HttpServer::bind`].
#[derive(Debug, Clone, Copy)]
pub(super) struct ConnectionLimits {
    /// How many connections are served at once.
    pub max_connections: usize,
    /// How long a connection may take to send a request's headers, or stay idle between
    /// requests.
    pub header_timeout: Duration,
}

/// What a connection beyond the cap reads before it is closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: 110\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32000,\"message\":\"Service Unavailable: too many open connections\"}}";

/// How long a connection beyond the cap may take to send its request head before it is
/// answered `503` anyway.
pub(super) const REFUSAL_WAIT: Duration = Duration::from_secs(1);

/// How many connections beyond the cap may wait for their `503` at once.
pub(super) const REFUSALS: usize = 64;

/// How much of a refused connection's request is read, at most.
const REFUSAL_READ: usize = 16 * 1024;

/// How long to wait after `accept` fails (out of descriptors, typically) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Accepts connections on `listener` for ever and serves each with `app`.
pub(super) async fn serve(listener: TcpListener, app: axum::Router, limits: ConnectionLimits) {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let refusals = Arc::new(Semaphore::new(REFUSALS));
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "accepting a connection failed; retrying shortly");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            tracing::warn!(%peer, limit = limits.max_connections, "refusing a connection: the server has as many open as it allows");
            if let Ok(refusal) = refusals.clone().try_acquire_owned() {
                tokio::spawn(async move {
                    refuse(tcp).await;
                    drop(refusal);
                });
            }
            continue;
        };
        // Without it a request/response exchange stalls on delayed ACKs (DESIGN.md).
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(TokioIo::new(tcp), service);
            if let Err(e) = connection.await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
}

/// Answers `503` once the request head is in (or [`REFUSAL_WAIT`] has passed), then closes.
async fn refuse(mut tcp: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let head = async {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while seen.len() < REFUSAL_READ && !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    };
    let _ = tokio::time::timeout(REFUSAL_WAIT, head).await;
    let _ = tokio::time::timeout(REFUSAL_WAIT, async {
        let _ = tcp.write_all(BUSY).await;
        let _ = tcp.shutdown().await;
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_answer_is_well_formed() {
        let text = std::str::from_utf8(BUSY).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let error: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(error["error"]["code"], -32000);
    }
}
