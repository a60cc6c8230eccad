//! A stdio server whose input ends (its client wrote a batch of requests and closed stdin)
//! answers every request it read before [`Peer::closed`](junction::session::Peer::closed)
//! resolves, so a `main` that returns then loses nothing: here the server's runtime is dropped
//! the moment `closed()` resolves, as a process's exit would end it, while its output drains
//! through a pipe much smaller than the answers.

use junction::server::{tool, Server};
use junction::transport::stdio;
use junction::transport::Limits;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    message: String,
}

async fn echo(args: EchoArgs) -> String {
    format!("Echo: {}", args.message)
}

const CALLS: usize = 300;

fn requests() -> Vec<u8> {
    let mut out = String::new();
    out.push_str(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#);
    out.push('\n');
    out.push_str(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    out.push('\n');
    for id in 1..=CALLS {
        out.push_str(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"m{id}"}}}}}}"#
        ));
        out.push('\n');
    }
    out.into_bytes()
}

#[test]
fn every_request_read_before_the_input_ended_is_answered_before_closed_resolves() {
    let (mut client_out, server_in) = tokio::io::duplex(1 << 20);
    // 256 bytes: the server's writer waits on the client's reads for most of its answers.
    let (server_out, mut client_in) = tokio::io::duplex(256);
    let reader = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for the client");
        rt.block_on(async move {
            client_out
                .write_all(&requests())
                .await
                .expect("the requests are written");
            // The end of the server's input.
            drop(client_out);
            let mut answers = Vec::new();
            let mut chunk = [0u8; 97];
            loop {
                match client_in.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => answers.extend_from_slice(&chunk[..n]),
                }
                // A slow reader.
                tokio::time::sleep(std::time::Duration::from_micros(200)).await;
            }
            answers
        })
    });

    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime for the server");
    server.block_on(async {
        let echo_server = Server::builder("echo", "0")
            .tool(tool("echo", echo))
            .build()
            .expect("the server builds");
        let connection = stdio::connect(server_in, server_out, Limits::default());
        echo_server.serve(connection).closed().await;
    });
    // What a process exit does to the tasks still running.
    drop(server);

    let answers = reader.join().expect("the reader ends");
    let answers = String::from_utf8(answers).expect("answers are UTF-8");
    let lines: Vec<&str> = answers.lines().collect();
    assert_eq!(lines.len(), CALLS + 1, "initialize and every call answered");
    for id in 1..=CALLS {
        let expected = format!(r#""id":{id},"#);
        let line = lines
            .iter()
            .find(|l| l.contains(&expected))
            .unwrap_or_else(|| panic!("no answer to call {id}"));
        assert!(line.contains(&format!("Echo: m{id}")), "{line}");
    }
}
