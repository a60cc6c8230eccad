//! Two connected ends in one process.
//!
//! [`pair`] gives a client end and a server end; every message really is encoded to JSON and
//! decoded on the other side, so in-memory tests exercise the same framing as stdio.
//! [`raw`] gives one [`Connection`] and a [`RawPeer`] that sends arbitrary bytes, for tests of
//! malformed input.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let (a, mut b) = junction::transport::memory::pair(Default::default());
//! let ping = junction_protocol::Message::decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
//! a.outgoing.send(junction::transport::Outbound { message: ping, related: None }).unwrap();
//! let Some(junction::transport::Inbound::Frame(bytes)) = b.incoming.recv().await else { panic!() };
//! assert_eq!(bytes, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
//! # }
//! ```

use tokio::sync::mpsc;

use super::{
    outbound_queue, Connection, FrameError, Inbound, Limits, OutboundReceiver, DEFAULT_MAX_QUEUED,
    INBOUND_QUEUE,
};

/// The test side of [`raw`]: sends frames as bytes, receives what the connection sends.
#[derive(Debug)]
pub struct RawPeer {
    /// Frames delivered to the connection's `incoming`.
    pub frames: mpsc::Sender<Inbound>,
    /// What the connection sent.
    pub sent: OutboundReceiver,
}

impl RawPeer {
    /// Sends one frame of bytes.
    pub async fn send(&self, frame: impl Into<Vec<u8>>) -> bool {
        self.frames.send(Inbound::Frame(frame.into())).await.is_ok()
    }

    /// Waits for the next message the connection sends, as a JSON value.
    pub async fn recv(&mut self) -> Option<serde_json::Value> {
        let out = self.sent.recv().await?;
        serde_json::from_slice(&out.message.encode()).ok()
    }
}

/// A connection whose other end is driven by hand; its outgoing queue holds the default
/// [`DEFAULT_MAX_QUEUED`] bytes.
pub fn raw() -> (Connection, RawPeer) {
    raw_with(DEFAULT_MAX_QUEUED)
}

fn raw_with(max_queued: usize) -> (Connection, RawPeer) {
    let (out_tx, out_rx) = outbound_queue(max_queued);
    let (in_tx, in_rx) = mpsc::channel(INBOUND_QUEUE);
    (
        Connection::new(out_tx, in_rx),
        RawPeer {
            frames: in_tx,
            sent: out_rx,
        },
    )
}

/// Two connected ends.
pub fn pair(limits: Limits) -> (Connection, Connection) {
    let (a, a_raw) = raw_with(limits.max_queued);
    let (b, b_raw) = raw_with(limits.max_queued);
    tokio::spawn(pump(a_raw.sent, b_raw.frames, limits));
    tokio::spawn(pump(b_raw.sent, a_raw.frames, limits));
    (a, b)
}

/// Carries one direction; an end that stops reading overflows the other's queue, which
/// ends this pump and so disconnects it.
async fn pump(mut from: OutboundReceiver, to: mpsc::Sender<Inbound>, limits: Limits) {
    while let Some(out) = from.recv().await {
        let bytes = out.message.encode();
        let item = if bytes.len() > limits.max_frame {
            Inbound::Refused(Box::new(FrameError::TooLarge {
                size: bytes.len(),
                limit: limits.max_frame,
                response_to: match &out.message {
                    junction_protocol::Message::Response(r) => r.id.clone(),
                    _ => None,
                },
            }))
        } else {
            Inbound::Frame(bytes)
        };
        if to.send(item).await.is_err() {
            return;
        }
    }
    if from.overflowed() {
        tracing::warn!("disconnecting an in-memory peer: it stopped reading and the messages waiting for it passed the outgoing queue's limit");
    }
}
