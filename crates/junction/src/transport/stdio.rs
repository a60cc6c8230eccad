//! Newline-delimited JSON over a reader and a writer (the MCP stdio transport).
//!
//! Each message is one line of compact JSON. A line longer than [`Limits::max_frame`] is
//! discarded as it streams in (never buffered whole) and reported as
//! [`FrameError::TooLarge`]. Blank lines are skipped. A trailing `\r` is tolerated.
//!
//! ```no_run
//! # async fn run() {
//! // A server speaks on its own stdin/stdout:
//! let connection = junction::transport::stdio::stdio(Default::default());
//! # drop(connection);
//! # }
//! ```

use junction_protocol::jsonrpc::peek_response_id;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

pub use super::pipe::{stdin_stdout, Stdin, Stdout};
use super::{
    outbound_queue, Connection, FrameError, Inbound, Limits, Outbound, OutboundReceiver,
    TransportError, INBOUND_QUEUE,
};

/// A connection over this process's stdin and stdout. When both are pipes or sockets (as
/// when a client spawns the server) they are read and written without blocking, through the
/// runtime's reactor; otherwise (files, a terminal) through Tokio's blocking handles.
pub fn stdio(limits: Limits) -> Connection {
    let (input, output) = stdin_stdout();
    connect(input, output, limits)
}

/// A connection over any reader and writer; spawns one task for each direction.
pub fn connect<R, W>(reader: R, writer: W, limits: Limits) -> Connection
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, out_rx) = outbound_queue(limits.max_queued);
    let (in_tx, in_rx) = mpsc::channel(INBOUND_QUEUE);
    let reading = tokio::spawn(read_frames(
        BufReader::new(reader),
        in_tx,
        limits.max_frame,
        Stray::Decode,
    ));
    tokio::spawn(async move {
        if write_frames(writer, out_rx, std::future::pending()).await == WriteEnd::Overflowed {
            // A peer that does not read is disconnected both ways.
            reading.abort();
        }
    });
    Connection::new(out_tx, in_rx)
}

/// What [`read_frames`] does with a line that cannot be JSON (it does not start with `{`
/// or `[`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stray {
    /// Hands it on like any frame: the session answers it with a parse error, as JSON-RPC
    /// asks of a server.
    Decode,
    /// Gives the connection up at once with [`Inbound::Broken`] naming the line: a client
    /// whose server writes logs or banners to stdout would otherwise wait for answers until
    /// its timeout.
    Break,
}

/// Reads lines until EOF or until nobody listens.
pub(crate) async fn read_frames<R: AsyncBufRead + Unpin>(
    mut reader: R,
    tx: mpsc::Sender<Inbound>,
    max_frame: usize,
    stray: Stray,
) {
    let mut line = Vec::new();
    let mut discarded: Option<usize> = None;
    let mut response_to = None;
    loop {
        let buf = match reader.fill_buf().await {
            Ok(buf) => buf,
            Err(e) => {
                tracing::debug!(error = %e, "stdio read failed; closing");
                return;
            }
        };
        if buf.is_empty() {
            // EOF: a final unterminated line still counts as a message.
            if discarded.is_none() && !line.iter().all(u8::is_ascii_whitespace) {
                let _ = tx.send(frame(std::mem::take(&mut line), stray)).await;
            }
            return;
        }
        let (chunk, found_newline) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        let taken = found_newline.unwrap_or(chunk.len());
        match &mut discarded {
            Some(size) => *size += chunk.len(),
            None if line.len() + chunk.len() > max_frame => {
                discarded = Some(line.len() + chunk.len());
                line.extend_from_slice(
                    &chunk[..max_frame.saturating_sub(line.len()).min(chunk.len())],
                );
                response_to = peek_response_id(&line);
                line.clear();
                line.shrink_to(0);
            }
            None => line.extend_from_slice(chunk),
        }
        reader.consume(taken);
        if found_newline.is_some() {
            let item = match discarded.take() {
                Some(size) => Some(Inbound::Refused(Box::new(FrameError::TooLarge {
                    size,
                    limit: max_frame,
                    response_to: response_to.take(),
                }))),
                None => {
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    if line.iter().all(u8::is_ascii_whitespace) {
                        line.clear();
                        None
                    } else {
                        Some(frame(std::mem::take(&mut line), stray))
                    }
                }
            };
            if let Some(item) = item {
                let broken = matches!(item, Inbound::Broken(_));
                if tx.send(item).await.is_err() || broken {
                    return;
                }
            }
        }
    }
}

/// A non-blank line as the session gets it: a frame, unless it cannot be JSON and `stray`
/// says to give up.
fn frame(line: Vec<u8>, stray: Stray) -> Inbound {
    let json = matches!(
        line.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    );
    match (json, stray) {
        (_, Stray::Decode) => Inbound::Frame(line),
        (true, Stray::Break) => Inbound::Strict(line),
        (false, Stray::Break) => Inbound::Broken(Box::new(TransportError::not_json(&line))),
    }
}

/// Why [`write_frames`] stopped.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum WriteEnd {
    /// Every sender went, or writing failed.
    Closed,
    /// The peer stopped reading and the outgoing queue overflowed.
    Overflowed,
}

/// Writes each outbound message as one line; flushes when the queue is momentarily empty.
///
/// When `close` resolves, what is already queued is still written (a goodbye must not drop
/// the `notifications/cancelled` sent just before it), then the writer is shut down.
pub(crate) async fn write_frames<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: OutboundReceiver,
    close: impl std::future::Future<Output = ()>,
) -> WriteEnd {
    let mut buf = Vec::with_capacity(8 * 1024);
    tokio::pin!(close);
    let mut closing = false;
    loop {
        let first = if closing {
            match rx.try_recv() {
                Ok(first) => first,
                Err(_) => break,
            }
        } else {
            tokio::select! {
                biased;
                first = rx.recv() => match first {
                    Some(first) => first,
                    None => break,
                },
                () = &mut close => {
                    closing = true;
                    continue;
                }
            }
        };
        buf.clear();
        push_line(&mut buf, &first);
        while let Ok(next) = rx.try_recv() {
            push_line(&mut buf, &next);
            if buf.len() > 64 * 1024 {
                break;
            }
        }
        let written = tokio::select! {
            written = async {
                writer.write_all(&buf).await?;
                writer.flush().await
            } => written,
            // The write is stuck on a peer that does not read, and the queue filled meanwhile.
            () = rx.overflow() => break,
        };
        if let Err(e) = written {
            tracing::debug!(error = %e, "stdio write failed; closing");
            return WriteEnd::Closed;
        }
    }
    if rx.overflowed() {
        tracing::warn!("disconnecting the peer: it stopped reading and the messages waiting for it passed the outgoing queue's limit");
        return WriteEnd::Overflowed;
    }
    let _ = writer.shutdown().await;
    WriteEnd::Closed
}

fn push_line(buf: &mut Vec<u8>, out: &Outbound) {
    // `Message` serialization cannot fail: its members are already JSON.
    if serde_json::to_writer(&mut *buf, &out.message).is_ok() {
        buf.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &'static [u8], max: usize) -> Vec<Result<String, FrameError>> {
        read(input, max, Stray::Decode)
            .await
            .into_iter()
            .map(|item| match item {
                Inbound::Frame(f) => Ok(String::from_utf8(f).unwrap()),
                Inbound::Refused(e) => Err(*e),
                other => unreachable!("stdio reports only frames and refusals: {other:?}"),
            })
            .collect()
    }

    async fn read(input: &'static [u8], max: usize, stray: Stray) -> Vec<Inbound> {
        let (tx, mut rx) = mpsc::channel(16);
        read_frames(BufReader::with_capacity(4, input), tx, max, stray).await;
        let mut out = Vec::new();
        while let Some(item) = rx.recv().await {
            out.push(item);
        }
        out
    }

    #[tokio::test]
    async fn a_close_writes_what_is_queued_before_it_ends_the_output() {
        let (tx, rx) = outbound_queue(1 << 20);
        for id in 1..=3 {
            let line = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
            );
            let message = junction_protocol::Message::decode(line.as_bytes()).unwrap();
            tx.send(Outbound {
                message,
                related: None,
            })
            .unwrap();
        }
        let mut out = Vec::new();
        // The close is already there, and the sender still lives: the writer must not wait
        // for more, nor drop what came before the close.
        let end = write_frames(&mut out, rx, std::future::ready(())).await;
        assert_eq!(end, WriteEnd::Closed);
        let out = String::from_utf8(out).unwrap();
        let ids: Vec<u64> = out
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["params"]["requestId"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(ids, [1, 2, 3], "{out}");
        drop(tx);
    }

    #[tokio::test]
    async fn a_line_that_cannot_be_json_breaks_a_strict_reader_at_once() {
        let got = read(
            b"{\"a\":1}\nServer listening\n{\"b\":2}\n",
            100,
            Stray::Break,
        )
        .await;
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(matches!(&got[0], Inbound::Strict(f) if f == b"{\"a\":1}"));
        assert!(
            matches!(&got[1], Inbound::Broken(e) if matches!(&**e, TransportError::NotJson { line } if line == "Server listening")),
            "{got:?}"
        );
        let lenient = frames(b"hello\n{}\n", 100).await;
        assert_eq!(lenient, vec![Ok("hello".into()), Ok("{}".into())]);
    }

    #[tokio::test]
    async fn splits_lines_skips_blanks_and_strips_cr() {
        let got = frames(b"{\"a\":1}\n\n  \n{\"b\":2}\r\n{\"c\":3}", 100).await;
        assert_eq!(
            got,
            vec![
                Ok("{\"a\":1}".into()),
                Ok("{\"b\":2}".into()),
                Ok("{\"c\":3}".into())
            ]
        );
    }

    #[tokio::test]
    async fn refuses_long_lines_without_losing_the_next() {
        let got = frames(b"0123456789abcdef\n{\"ok\":1}\n", 10).await;
        assert_eq!(
            got,
            vec![
                Err(FrameError::TooLarge {
                    size: 16,
                    limit: 10,
                    response_to: None,
                }),
                Ok("{\"ok\":1}".into())
            ]
        );
    }
}
