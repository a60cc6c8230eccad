//! A wire log: a [`Connection`] wrapper that copies every frame it receives to a writer, one
//! JSON message per line (a message the transport decoded already is encoded for it), before
//! passing the frame on unchanged.
//!
//! It works with any transport, since it wraps the connection a transport gives. A frame is
//! written and flushed before the session sees it, so once a response has come back the log
//! already holds the request. A write error stops the log (with a warning) but never the
//! session.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use junction::transport::{memory, tap, Inbound, Outbound};
//!
//! let (client, server) = memory::pair(Default::default());
//! let (log, mut log_reader) = tokio::io::duplex(1024);
//! let mut server = tap::tap(server, log);
//! let ping = junction_protocol::Message::decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
//! client.outgoing.send(Outbound { message: ping, related: None }).unwrap();
//! let Some(Inbound::Frame(frame)) = server.incoming.recv().await else { panic!() };
//! let mut line = String::new();
//! use tokio::io::AsyncBufReadExt;
//! tokio::io::BufReader::new(&mut log_reader).read_line(&mut line).await.unwrap();
//! assert_eq!(line.trim_end().as_bytes(), frame.as_slice());
//! # }
//! ```

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::{Connection, Inbound, INBOUND_QUEUE};

/// Wraps `connection` so that every frame it receives is also written to `log`, followed by a
/// newline. Outgoing messages pass untouched; refused frames (which carry no message) are not
/// logged.
pub fn tap<W>(connection: Connection, log: W) -> Connection
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let Connection {
        outgoing,
        mut incoming,
        request_id_prefix,
    } = connection;
    let (tx, rx) = mpsc::channel(INBOUND_QUEUE);
    tokio::spawn(async move {
        let mut log = Some(log);
        while let Some(item) = incoming.recv().await {
            if let Some(writer) = log.as_mut() {
                let written = match &item {
                    Inbound::Frame(frame) | Inbound::Strict(frame) => {
                        Some(write_line(writer, frame).await)
                    }
                    Inbound::Message(message) => Some(write_line(writer, &message.encode()).await),
                    _ => None,
                };
                if let Some(Err(e)) = written {
                    tracing::warn!("the wire log stopped: {e}");
                    log = None;
                }
            }
            if tx.send(item).await.is_err() {
                return;
            }
        }
        if let Some(mut writer) = log {
            let _ = writer.shutdown().await;
        }
    });
    Connection {
        outgoing,
        incoming: rx,
        request_id_prefix,
    }
}

/// Writes one frame as one line. A line break inside a frame can only be whitespace between
/// JSON tokens (inside strings it is escaped), so it becomes a space and the JSON stays valid.
async fn write_line<W: AsyncWrite + Unpin>(writer: &mut W, frame: &[u8]) -> std::io::Result<()> {
    let mut line: Vec<u8> = frame
        .iter()
        .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
        .collect();
    line.push(b'\n');
    writer.write_all(&line).await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::memory;

    #[tokio::test]
    async fn logs_each_received_frame_on_one_line_and_forwards_it_unchanged() {
        let (connection, peer) = memory::raw();
        let (log, mut reader) = tokio::io::duplex(4096);
        let mut tapped = tap(connection, log);
        peer.send(&b"{\"a\":\n1}"[..]).await;
        peer.send(&b"{\"b\":2}"[..]).await;
        let mut forwarded = Vec::new();
        for _ in 0..2 {
            match tapped.incoming.recv().await {
                Some(Inbound::Frame(frame)) => forwarded.push(frame),
                other => panic!("expected a frame, got {other:?}"),
            }
        }
        assert_eq!(
            forwarded,
            vec![b"{\"a\":\n1}".to_vec(), b"{\"b\":2}".to_vec()]
        );
        drop(peer);
        assert!(tapped.incoming.recv().await.is_none());
        let mut text = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut reader, &mut text)
            .await
            .unwrap();
        assert_eq!(text, "{\"a\": 1}\n{\"b\":2}\n");
    }

    #[tokio::test]
    async fn logs_a_message_the_transport_decoded_as_its_encoding() {
        let (outgoing, _sent) = crate::transport::outbound_queue(1024);
        let (inbound, incoming) = mpsc::channel(4);
        let (log, mut reader) = tokio::io::duplex(4096);
        let mut tapped = tap(Connection::new(outgoing, incoming), log);
        let frame = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let ping = junction_protocol::Message::decode(frame).unwrap();
        inbound
            .send(Inbound::Message(Box::new(ping)))
            .await
            .unwrap();
        drop(inbound);
        assert!(matches!(
            tapped.incoming.recv().await,
            Some(Inbound::Message(m)) if m.method() == Some("ping")
        ));
        assert!(tapped.incoming.recv().await.is_none());
        let mut text = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut reader, &mut text)
            .await
            .unwrap();
        assert_eq!(text.as_bytes(), [&frame[..], b"\n"].concat());
    }

    #[tokio::test]
    async fn a_failing_log_does_not_stop_the_session() {
        let (connection, peer) = memory::raw();
        let (log, reader) = tokio::io::duplex(64);
        drop(reader);
        let mut tapped = tap(connection, log);
        peer.send(&b"{}"[..]).await;
        peer.send(&b"[]"[..]).await;
        assert!(matches!(tapped.incoming.recv().await, Some(Inbound::Frame(f)) if f == b"{}"));
        assert!(matches!(tapped.incoming.recv().await, Some(Inbound::Frame(f)) if f == b"[]"));
    }
}
