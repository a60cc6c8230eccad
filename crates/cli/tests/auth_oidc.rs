//! Authorization end to end against a real authorization server: npm `oidc-provider`
//! (tests-interop/oidc-provider.mjs) on loopback, `junction serve library --http ...
//! --auth-issuer ...` as the resource server, and `junction run` (the host, with a scripted
//! model) and `junction call` as clients. The browser is tests-interop/auto-browser.mjs,
//! given as `$BROWSER`: it follows the provider's redirects (login and consent complete at
//! once) to Junction's loopback redirect listener.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use junction_test_support::cli::{self, HttpServe};
use junction_test_support::peers::peer;
use junction_test_support::process;
use serde_json::{json, Value};

/// The authorization server, running until dropped.
struct Provider {
    child: Child,
    issuer: String,
}

impl Provider {
    fn start(token_format: &str) -> Provider {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests-interop/oidc-provider.mjs");
        let mut child = Command::new(peer("JUNCTION_NODE"))
            .arg(script)
            .env("JUNCTION_NODE_MODULES", peer("JUNCTION_NODE_MODULES"))
            .env("OIDC_TOKEN_FORMAT", token_format)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("oidc-provider starts");
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        // It writes notices later: a closed pipe would kill it.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let issuer = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line from oidc-provider: {line:?}"))
            .to_owned();
        Provider { child, issuer }
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch directory standing in for the user's config directory.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("junction-auth-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn credentials(&self) -> Value {
        let text = std::fs::read_to_string(self.0.join("junction/credentials.json"))
            .expect("credentials were stored");
        serde_json::from_str(&text).unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `junction ARGS` as the user whose config directory is `home`, with the test's browser.
fn junction_as(home: &Scratch, args: &[&str]) -> process::Run {
    junction_typing(home, args, None, &[])
}

/// [`junction_as`] with `input` typed on stdin and more variables.
fn junction_typing(
    home: &Scratch,
    args: &[&str],
    input: Option<&str>,
    env: &[(&str, &str)],
) -> process::Run {
    let browser =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests-interop/auto-browser.mjs");
    process::Run::of(
        cli::host_command(&home.0)
            .args(args)
            .envs(env.iter().copied())
            .env(
                "BROWSER",
                format!("{} {}", peer("JUNCTION_NODE"), browser.display()),
            ),
        input,
    )
}

/// The protected library server's URL, by the address it was bound to (the tokens'
/// audience).
fn protected_library(flags: &[&str]) -> (HttpServe, String) {
    let serve = HttpServe::start("library", flags);
    let url = serve.url.replace("//localhost:", "//127.0.0.1:");
    (serve, url)
}

#[test]
fn the_host_logs_in_through_oidc_provider_and_calls_a_tool() {
    let provider = Provider::start("jwt");
    // The server takes only DPoP-bound tokens, with proofs carrying its nonce: the host's
    // token from oidc-provider is bound, and its requests follow the server's nonce.
    let (_serve, url) = protected_library(&[
        "--auth-issuer",
        &provider.issuer,
        "--auth-scope",
        "mcp:read",
        "--auth-dpop",
        "--auth-dpop-nonce",
    ]);
    let home = Scratch::new("host");
    let config = home.0.join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"library": {"type": "http", "url": url}}}).to_string(),
    )
    .unwrap();
    let script = home.0.join("script.json");
    let turns = json!([
        {"toolCalls": [{"id": "c1", "name": "library__search", "arguments": {"query": "science"}}]},
        {"text": "Done."}
    ]);
    std::fs::write(&script, turns.to_string()).unwrap();
    let model = format!("scripted:{}", script.display());
    let config_arg = config.to_str().unwrap();

    let run = junction_as(
        &home,
        &[
            "run",
            "--config",
            config_arg,
            "--model",
            &model,
            "--yes",
            "Find science books",
        ],
    );
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    // `run` in text mode: the transcript on stderr, only the final answer on stdout.
    assert!(
        run.stderr.contains("results"),
        "the tool result is in the transcript (on stderr):\n{}",
        run.stderr
    );
    assert_eq!(run.stdout.trim(), "Done.", "stdout has the final answer");
    assert!(
        run.stderr.contains("To authorize, open this URL"),
        "{}",
        run.stderr
    );

    let stored = home.credentials();
    let record = &stored["tokens"][&url];
    assert_eq!(record["issuer"], provider.issuer.as_str());
    assert_eq!(record["tokens"]["scope"], "mcp:read");
    let token = record["tokens"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        !run.stdout.contains(&token) && !run.stderr.contains(&token),
        "the token was printed"
    );
    assert!(
        stored["clients"][&provider.issuer]["client_id"].is_string(),
        "registered under its issuer"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.0.join("junction/credentials.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let status = junction_as(
        &home,
        &["auth", "status", "library", "--config", config_arg],
    );
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert!(
        status.stdout.contains(&format!(
            "library: authorized by {}, scopes mcp:read",
            provider.issuer
        )),
        "{}",
        status.stdout
    );

    // oidc-provider offers DPoP, so the stored token is bound to the client's key: presented
    // alone as a bearer token (as a thief would) it is refused, naming the binding, and not
    // echoed; a tampered one is refused for its signature.
    assert_eq!(record["tokens"]["dpop"], true, "{record}");
    let call = junction_as(
        &home,
        &["call", &url, "--bearer", &token, "--method", "ping"],
    );
    assert_eq!(call.code, 3, "{}", call.stdout);
    assert!(
        call.stderr.contains("HTTP 401") && call.stderr.contains("bound to a DPoP key"),
        "{}",
        call.stderr
    );
    assert!(!call.stderr.contains(&token));
    // One character inside the signature changed (the last one may only carry padding
    // bits, which a decoder may refuse before the signature is checked).
    let at = token.len() - 10;
    let was = token.as_bytes()[at];
    let mut forged = token.clone();
    forged.replace_range(at..=at, if was == b'A' { "B" } else { "A" });
    let call = junction_as(
        &home,
        &["call", &url, "--bearer", &forged, "--method", "ping"],
    );
    assert_eq!(call.code, 3, "{}", call.stdout);
    assert!(
        call.stderr.contains("HTTP 401") && call.stderr.contains("signature"),
        "{}",
        call.stderr
    );
    assert!(!call.stderr.contains(&forged));

    let logout = junction_as(
        &home,
        &["auth", "logout", "library", "--config", config_arg],
    );
    assert_eq!(
        logout.stdout.trim(),
        "library: credentials removed",
        "{}",
        logout.stderr
    );
    let status = junction_as(
        &home,
        &["auth", "status", "library", "--config", config_arg],
    );
    assert_eq!(status.stdout.trim(), "library: not authorized");
}

#[test]
fn opaque_tokens_are_checked_by_introspection() {
    let provider = Provider::start("opaque");
    let introspection = format!("{}/token/introspection", provider.issuer);
    let (_serve, url) = protected_library(&[
        "--auth-issuer",
        &provider.issuer,
        "--auth-introspect",
        &introspection,
        "--auth-client",
        "introspector:introspector-secret",
        "--auth-scope",
        "mcp:read",
    ]);
    let home = Scratch::new("introspection");
    let call = junction_as(&home, &["call", &url, "--method", "tools/list"]);
    assert_eq!(
        call.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        call.stdout, call.stderr
    );
    assert!(call.stdout.contains("\"search\""), "{}", call.stdout);
    let token = home.credentials()["tokens"][&url]["tokens"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!token.contains('.'), "an opaque token, not a JWT");
    let call = junction_as(
        &home,
        &[
            "call",
            &url,
            "--bearer",
            "not-a-real-token",
            "--method",
            "ping",
        ],
    );
    assert_eq!(call.code, 3);
    assert!(call.stderr.contains("not active"), "{}", call.stderr);
}

#[test]
fn the_typescript_sdk_client_authorizes_with_its_oauth_provider_and_calls_a_tool() {
    let provider = Provider::start("jwt");
    let (_serve, url) = protected_library(&[
        "--auth-issuer",
        &provider.issuer,
        "--auth-scope",
        "mcp:read",
    ]);
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests-interop/ts-oauth-client.mjs");
    let output = Command::new(peer("JUNCTION_NODE"))
        .arg(script)
        .args([&url, "search", r#"{"query": "science"}"#])
        .env("JUNCTION_NODE_MODULES", peer("JUNCTION_NODE_MODULES"))
        .stdin(Stdio::null())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let answer: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(answer["authorized"], true, "{answer}");
    assert_eq!(answer["scope"], "mcp:read", "{answer}");
    assert!(
        answer["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("search")),
        "{answer}"
    );
    assert_ne!(answer["result"]["isError"], true, "{answer}");
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("results")),
        "{answer}"
    );
}

#[test]
fn chat_logs_in_calls_a_tool_and_shows_the_authorization_without_the_token() {
    let provider = Provider::start("jwt");
    let (_serve, url) = protected_library(&[
        "--auth-issuer",
        &provider.issuer,
        "--auth-scope",
        "mcp:read",
    ]);
    let home = Scratch::new("chat");
    let config = home.0.join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"library": {"type": "http", "url": url}}}).to_string(),
    )
    .unwrap();
    let script = home.0.join("script.json");
    let turns = json!([
        {"toolCalls": [{"id": "c1", "name": "library__search", "arguments": {"query": "science"}}]},
        {"text": "Found them."}
    ]);
    std::fs::write(&script, turns.to_string()).unwrap();
    let model = format!("scripted:{}", script.display());
    let chat = junction_typing(
        &home,
        &[
            "chat",
            "--config",
            config.to_str().unwrap(),
            "--model",
            &model,
            "--yes",
        ],
        Some("Find science books\n/mcp\n/quit\n"),
        &[],
    );
    assert_eq!(
        chat.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        chat.stdout, chat.stderr
    );
    let all = format!("{}{}", chat.stdout, chat.stderr);
    assert!(all.contains("To authorize, open this URL"), "{all}");
    assert!(all.contains("results"), "the tool was called:\n{all}");
    assert!(
        all.contains(&format!(
            "library: authorized by {}, scopes mcp:read, expires in",
            provider.issuer
        )),
        "/mcp shows the authorization:\n{all}"
    );
    let token = home.credentials()["tokens"][&url]["tokens"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!all.contains(&token), "the token was shown");
}

#[test]
fn a_login_slower_than_the_startup_timeout_is_waited_for() {
    let provider = Provider::start("jwt");
    let (_serve, url) = protected_library(&[
        "--auth-issuer",
        &provider.issuer,
        "--auth-scope",
        "mcp:read",
    ]);
    let home = Scratch::new("slow");
    let config = home.0.join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"library": {"type": "http", "url": url, "startupTimeoutMs": 3000}}})
            .to_string(),
    )
    .unwrap();
    let script = home.0.join("script.json");
    std::fs::write(&script, json!([{"text": "Ready."}]).to_string()).unwrap();
    let model = format!("scripted:{}", script.display());
    let run = junction_typing(
        &home,
        &[
            "run",
            "--config",
            config.to_str().unwrap(),
            "--model",
            &model,
            "hello",
        ],
        None,
        // The login takes well past the startup timeout, which still has to cover the
        // metadata discovery and client registration before it (on a loaded machine too).
        &[("AUTO_BROWSER_DELAY_MS", "8000")],
    );
    assert_eq!(
        run.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        !run.stderr.contains("failed"),
        "the server started:\n{}",
        run.stderr
    );
    assert!(home.credentials()["tokens"][&url].is_object());
}
