//! A small notes server over stdio: a tool that adds notes, a resource listing them, a
//! template reading one, a prompt with completion of note titles, and logging.
//!
//! Run it with `cargo run -p junction --example notes_server` and speak MCP on stdin, or point
//! any MCP client at that command. It prints nothing but protocol on stdout.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use junction::server::{
    not_found, prompt, resource, template, tool, CompleteRequest, Context, ReadRequest, Server,
};
use junction::transport::stdio;

type Notes = Arc<Mutex<BTreeMap<String, String>>>;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddNote {
    /// The note's title, used in its URI `notes://{title}`.
    title: String,
    /// The text.
    text: String,
}

fn titles(notes: &Notes) -> Vec<String> {
    let notes = notes.lock().unwrap_or_else(PoisonError::into_inner);
    notes.keys().cloned().collect()
}

#[tokio::main]
async fn main() {
    let notes: Notes = Arc::default();
    let (n1, n2, n3, n4) = (notes.clone(), notes.clone(), notes.clone(), notes.clone());

    let add = move |ctx: Context, args: AddNote| {
        let notes = n1.clone();
        async move {
            let uri = format!("notes://{}", args.title);
            notes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(args.title.clone(), args.text);
            ctx.info(format!("added {uri}"));
            // Subscribers of the index hear that it changed.
            ctx.server().notify_resource_updated("notes://index");
            format!("Saved. Read it at {uri}.")
        }
    };

    let server = Server::builder("notes", "0.1.0")
        .instructions("Use add_note to remember things; read notes://index for the list.")
        .tool(tool("add_note", add).description("Saves a note under a title"))
        .resource(
            resource("notes://index", "index", move |_| {
                let list = titles(&n2).join("\n");
                async move { list }
            })
            .description("The titles of every note")
            .mime_type("text/plain"),
        )
        .template(
            template("notes://{title}", "note", move |r: ReadRequest| {
                let found = r.var("title").and_then(|t| {
                    n3.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get(t)
                        .cloned()
                });
                async move { found.ok_or_else(|| not_found(&r.uri)) }
            })
            .mime_type("text/plain")
            .complete("title", {
                let notes = notes.clone();
                move |c: CompleteRequest| {
                    let matches: Vec<String> = titles(&notes)
                        .into_iter()
                        .filter(|t| t.starts_with(&c.value))
                        .collect();
                    async move { matches }
                }
            }),
        )
        .prompt(
            prompt("summarize", move |p| {
                let text = p
                    .arg("title")
                    .and_then(|t| {
                        n4.lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .get(t)
                            .cloned()
                    })
                    .unwrap_or_default();
                async move { format!("Summarize this note in one sentence:\n\n{text}") }
            })
            .description("Asks for a one-sentence summary of a note")
            .required("title", "The note's title"),
        )
        .subscriptions()
        .build()
        .expect("the server definition is valid");

    let peer = server.serve(stdio::stdio(Default::default()));
    peer.closed().await;
}
