//! A hostile MCP server as a real child process: a POSIX shell script that answers from
//! files the test writes, so that each test can make it say whatever an attacker would.
//!
//! In its directory the script reads:
//!
//! - `server.json`: the `serverInfo` object;
//! - `capabilities.json`: the `capabilities` object, when it exists (else tools with
//!   `listChanged`, and logging);
//! - `tools.json`: the `tools` array; after the first `tools/call`, `tools-after.json`
//!   when it exists (and then sends `notifications/tools/list_changed` first);
//! - `result.json`: the `result` of every `tools/call`;
//! - `before-call.jsonl`: lines sent before each call's answer (log messages, …);
//! - `later.jsonl`: lines sent after a call's answer, once the test creates the file `go`
//!   (a server speaking up while the chat waits at its prompt);
//! - `early.jsonl`: lines sent on `initialize`, before its answer (requests a server must
//!   not send yet);
//! - `progress`: a number N: each `tools/call` first sends N progress notifications, 0.2 s
//!   apart;
//! - `ask`: when it exists, each `tools/call` first asks an elicitation (the file's
//!   content as its params, or a one-field form when it is empty) and waits for its answer;
//! - `roots`: when it exists, each `tools/call` first asks for `roots/list` and waits for
//!   the answer (kept in `received.jsonl` like every line);
//! - `hang`: when it exists, `tools/call` is never answered;
//! - `die`: when it exists, the next `tools/call` removes it, writes its text to stderr and
//!   exits with status 1 without answering (a crash mid-call; started again, it behaves).
//!
//! It appends every line it receives to `received.jsonl`, writes its pid to `pid` and its
//! environment to `env`.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

const SCRIPT: &str = r#"#!/bin/sh
dir=$(dirname "$0")
echo $$ > "$dir/pid"
env > "$dir/env"
called=0
while IFS= read -r line; do
  printf '%s\n' "$line" >> "$dir/received.jsonl"
  id=$(printf '%s' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9][0-9]*\),"method".*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      if [ -f "$dir/early.jsonl" ]; then cat "$dir/early.jsonl"; fi
      caps='{"tools":{"listChanged":true},"logging":{}}'
      if [ -f "$dir/capabilities.json" ]; then caps=$(cat "$dir/capabilities.json"); fi
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":%s,"serverInfo":%s}}\n' "$id" "$caps" "$(cat "$dir/server.json")"
      ;;
    *'"method":"tools/list"'*)
      tools="$dir/tools.json"
      if [ "$called" = 1 ] && [ -f "$dir/tools-after.json" ]; then tools="$dir/tools-after.json"; fi
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":%s}}\n' "$id" "$(cat "$tools")"
      ;;
    *'"method":"tools/call"'*)
      if [ -f "$dir/die" ]; then
        cat "$dir/die" >&2
        rm -f "$dir/die"
        exit 1
      fi
      if [ -f "$dir/before-call.jsonl" ]; then cat "$dir/before-call.jsonl"; fi
      if [ -f "$dir/progress" ]; then
        i=1
        while [ "$i" -le "$(cat "$dir/progress")" ]; do
          sleep 0.2
          printf '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%s,"total":%s,"message":"step %s"}}\n' "$id" "$i" "$(cat "$dir/progress")" "$i"
          i=$((i + 1))
        done
      fi
      if [ -f "$dir/ask" ]; then
        params='{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}'
        if [ -s "$dir/ask" ]; then params=$(cat "$dir/ask"); fi
        printf '{"jsonrpc":"2.0","id":700,"method":"elicitation/create","params":%s}\n' "$params"
        IFS= read -r answer
        printf '%s\n' "$answer" >> "$dir/received.jsonl"
      fi
      if [ -f "$dir/roots" ]; then
        printf '%s\n' '{"jsonrpc":"2.0","id":701,"method":"roots/list"}'
        IFS= read -r answer
        printf '%s\n' "$answer" >> "$dir/received.jsonl"
      fi
      if [ -f "$dir/hang" ]; then continue; fi
      if [ "$called" = 0 ] && [ -f "$dir/tools-after.json" ]; then
        called=1
        printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
      fi
      printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$(cat "$dir/result.json")"
      if [ -f "$dir/later.jsonl" ]; then
        ( while [ ! -f "$dir/go" ]; do sleep 0.1; done; cat "$dir/later.jsonl" ) &
      fi
      ;;
    *'"method":"'*)
      if [ -n "$id" ]; then printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"; fi
      ;;
  esac
done
"#;

/// One hostile server's directory.
pub struct Hostile {
    /// Where its files are.
    pub dir: PathBuf,
}

impl Hostile {
    /// A fresh directory for the test `name`, with the script and a plain server info,
    /// no tools and an empty text result.
    pub fn new(name: &str) -> Hostile {
        let dir =
            std::env::temp_dir().join(format!("junction-hostile-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("server.sh"), SCRIPT).unwrap();
        let hostile = Hostile { dir };
        hostile.write(
            "server.json",
            &json!({"name": "hostile", "version": "1.0.0"}),
        );
        hostile.write("tools.json", &json!([]));
        hostile.write(
            "result.json",
            &json!({"content": [{"type": "text", "text": "ok"}]}),
        );
        hostile
    }

    /// Writes one of its files as JSON.
    pub fn write(&self, file: &str, value: &Value) {
        std::fs::write(self.dir.join(file), value.to_string()).unwrap();
    }

    /// Writes one of its `.jsonl` files: one message per line.
    pub fn write_lines(&self, file: &str, messages: &[Value]) {
        let text: String = messages.iter().map(|m| format!("{m}\n")).collect();
        std::fs::write(self.dir.join(file), text).unwrap();
    }

    /// Its config entry: `sh server.sh`.
    pub fn entry(&self) -> Value {
        json!({"command": "sh", "args": [self.dir.join("server.sh")]})
    }

    /// Every message it received, in order.
    pub fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.join("received.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The messages it received with this method.
    pub fn received_method(&self, method: &str) -> Vec<Value> {
        self.received()
            .into_iter()
            .filter(|m| m["method"] == method)
            .collect()
    }

    /// Its process id, once it started.
    pub fn pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.dir.join("pid"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Waits (at most a minute) until it received a message with `method`.
    pub fn wait_for(&self, method: &str) {
        for _ in 0..600 {
            if !self.received_method(method).is_empty() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("the server never received {method}");
    }

    /// [`Hostile::wait_for`] without blocking the runtime's thread.
    pub async fn wait_for_async(&self, method: &str) {
        for _ in 0..600 {
            if !self.received_method(method).is_empty() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("the server never received {method}");
    }

    /// The names of the environment variables it started with.
    pub fn environment(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("env"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_owned()))
            .collect()
    }

    /// Where a file of its directory is.
    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }
}

/// A tool definition as the server lists it.
pub fn tool(name: &str, description: &str) -> Value {
    json!({"name": name, "description": description, "inputSchema": {"type": "object"}})
}

/// Whether the process `pid` is still running (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    let stat = Path::new("/proc").join(pid.to_string()).join("stat");
    match std::fs::read_to_string(stat) {
        Ok(text) => !text
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
