//! This process's stdin and stdout as non-blocking pipes driven by the runtime's reactor.
//!
//! `tokio::io::stdin()` and `stdout()` run every read, write and flush on the blocking thread
//! pool, so each message costs thread hops and context switches. When fd 0 and fd 1 are
//! pipes (what an MCP client gives the server it spawns), copies of them are switched to
//! `O_NONBLOCK` and registered with the reactor instead; the flags, which the copies share
//! with fds 0 and 1, are restored when they are dropped. Anything else (a file, which cannot
//! be polled; a terminal, whose flags the shell shares; a socket) is left alone, and
//! [`stdin_stdout`] falls back to Tokio's handles for it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// This process's stdin: a non-blocking pipe, or Tokio's handle (see the module docs).
pub struct Stdin(In);

/// This process's stdout: a non-blocking pipe, or Tokio's handle (see the module docs).
/// Writes go straight to fd 1, past `std::io::stdout()`'s buffer, which nothing else in a
/// stdio server may use anyway.
pub struct Stdout(Out);

impl std::fmt::Debug for Stdin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stdin")
            .field("pipe", &!matches!(self.0, In::Tokio(_)))
            .finish()
    }
}

impl std::fmt::Debug for Stdout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stdout")
            .field("pipe", &!matches!(self.0, Out::Tokio(_)))
            .finish()
    }
}

enum In {
    #[cfg(unix)]
    Pipe(unix::PipeIn),
    Tokio(tokio::io::Stdin),
}

enum Out {
    #[cfg(unix)]
    Pipe(unix::PipeOut),
    Tokio(tokio::io::Stdout),
}

/// Stdin and stdout: non-blocking pipes when both are pipes, Tokio's handles otherwise.
/// Must be called inside a Tokio runtime.
pub fn stdin_stdout() -> (Stdin, Stdout) {
    #[cfg(unix)]
    if let Some((input, output)) = unix::open() {
        return (Stdin(In::Pipe(input)), Stdout(Out::Pipe(output)));
    }
    (
        Stdin(In::Tokio(tokio::io::stdin())),
        Stdout(Out::Tokio(tokio::io::stdout())),
    )
}

impl AsyncRead for Stdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.0 {
            #[cfg(unix)]
            In::Pipe(pipe) => Pin::new(&mut pipe.pipe).poll_read(cx, buf),
            In::Tokio(stdin) => Pin::new(stdin).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stdout {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.0 {
            #[cfg(unix)]
            Out::Pipe(pipe) => Pin::new(&mut pipe.pipe).poll_write(cx, buf),
            Out::Tokio(stdout) => Pin::new(stdout).poll_write(cx, buf),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.0 {
            #[cfg(unix)]
            Out::Pipe(pipe) => Pin::new(&mut pipe.pipe).poll_flush(cx),
            Out::Tokio(stdout) => Pin::new(stdout).poll_flush(cx),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.0 {
            #[cfg(unix)]
            Out::Pipe(pipe) => Pin::new(&mut pipe.pipe).poll_shutdown(cx),
            Out::Tokio(stdout) => Pin::new(stdout).poll_shutdown(cx),
        }
    }
}

#[cfg(unix)]
mod unix {
    use std::io;
    use std::os::fd::AsFd;

    use rustix::fs::OFlags;
    use tokio::net::unix::pipe;

    /// A non-blocking copy of fd 0; its flags (shared with fd 0) are restored on drop.
    pub(super) struct PipeIn {
        pub(super) pipe: pipe::Receiver,
        pub(super) restore: OFlags,
    }

    /// A non-blocking copy of fd 1; its flags (shared with fd 1) are restored on drop.
    pub(super) struct PipeOut {
        pub(super) pipe: pipe::Sender,
        pub(super) restore: OFlags,
    }

    /// Stdin and stdout, when both are pipes.
    pub(super) fn open() -> Option<(PipeIn, PipeOut)> {
        let open = || -> io::Result<(PipeIn, PipeOut)> {
            let input = std::io::stdin().as_fd().try_clone_to_owned()?;
            let restore = rustix::fs::fcntl_getfl(&input)?;
            let input = PipeIn {
                pipe: pipe::Receiver::from_owned_fd(input)?,
                restore,
            };
            let output = std::io::stdout().as_fd().try_clone_to_owned()?;
            let restore = rustix::fs::fcntl_getfl(&output)?;
            let output = PipeOut {
                pipe: pipe::Sender::from_owned_fd(output)?,
                restore,
            };
            Ok((input, output))
        };
        match open() {
            Ok(pipes) => Some(pipes),
            Err(e) => {
                tracing::debug!(error = %e, "stdin and stdout are not both pipes; using blocking reads and writes");
                None
            }
        }
    }

    impl Drop for PipeIn {
        fn drop(&mut self) {
            let _ = rustix::fs::fcntl_setfl(&self.pipe, self.restore);
        }
    }

    impl Drop for PipeOut {
        fn drop(&mut self) {
            let _ = rustix::fs::fcntl_setfl(&self.pipe, self.restore);
        }
    }
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::unix::{PipeIn, PipeOut};
    use rustix::fs::OFlags;
    use std::os::fd::OwnedFd;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::unix::pipe;

    /// The restore-on-drop rule, on a pipe of our own: the flags a copy shares with the
    /// original come back when the non-blocking copy is dropped.
    #[tokio::test]
    async fn a_dropped_pipe_restores_the_shared_flags() {
        let (read, write) = rustix::pipe::pipe().unwrap();
        let original = rustix::fs::fcntl_getfl(&read).unwrap();
        assert!(!original.contains(OFlags::NONBLOCK));
        let copy: OwnedFd = read.try_clone().unwrap();
        let mut input = PipeIn {
            pipe: pipe::Receiver::from_owned_fd(copy).unwrap(),
            restore: original,
        };
        assert!(rustix::fs::fcntl_getfl(&read)
            .unwrap()
            .contains(OFlags::NONBLOCK));
        let mut output = PipeOut {
            pipe: pipe::Sender::from_owned_fd(write.try_clone().unwrap()).unwrap(),
            restore: rustix::fs::fcntl_getfl(&write).unwrap(),
        };
        output.pipe.write_all(b"ping\n").await.unwrap();
        let mut got = [0u8; 5];
        input.pipe.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping\n");
        drop(input);
        assert_eq!(rustix::fs::fcntl_getfl(&read).unwrap(), original);
    }
}
