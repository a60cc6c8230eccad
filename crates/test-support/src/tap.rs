//! An in-process server behind a tap that records what the client sends it.

use std::sync::{Arc, Mutex};

use junction::server::Server;
use junction::session::Peer;
use junction::transport::{memory, Connection, Inbound, Outbound};
use junction_protocol::Message as Wire;

/// Every frame the client sent to one server, as text.
pub type Frames = Arc<Mutex<Vec<String>>>;

/// Serves `server` behind a tap that records in `frames` every frame the client sends it.
pub fn tapped(server: &Server, frames: Frames) -> (Connection, Peer) {
    let (client_end, tap_client) = memory::pair(Default::default());
    let (tap_server, server_end) = memory::pair(Default::default());
    let peer = server.serve(server_end);
    let Connection {
        outgoing: to_client,
        incoming: mut from_client,
        ..
    } = tap_client;
    let Connection {
        outgoing: to_server,
        incoming: mut from_server,
        ..
    } = tap_server;
    tokio::spawn(async move {
        while let Some(Inbound::Frame(bytes)) = from_client.recv().await {
            frames
                .lock()
                .unwrap()
                .push(String::from_utf8_lossy(&bytes).into_owned());
            if let Ok(message) = Wire::decode(&bytes) {
                let _ = to_server.send(Outbound {
                    message,
                    related: None,
                });
            }
        }
    });
    tokio::spawn(async move {
        while let Some(Inbound::Frame(bytes)) = from_server.recv().await {
            if let Ok(message) = Wire::decode(&bytes) {
                let _ = to_client.send(Outbound {
                    message,
                    related: None,
                });
            }
        }
    });
    (client_end, peer)
}
