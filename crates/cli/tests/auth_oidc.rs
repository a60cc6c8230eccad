//! Authorization end to end against a real authorization server: npm `oidc-provider`
//! (tests-interop/oidc-provider.mjs) on loopback, `junction serve library --http ...
//! --auth-issuer ...` as the resource server, and `junction run` (the host, with a scripted
//! model) and `junction call` as clients. The browser is tests-interop/auto-browser.mjs,
//! given as `$BROWSER`: it follows the provider's redirects (login and consent complete at
//! once) to Junction's loopback redirect listener.

mod common;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::{peer, HttpServe, JUNCTION};
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
fn junction_as(home: &Scratch, args: &[&str]) -> common::Run {
    let browser =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests-interop/auto-browser.mjs");
    let output = Command::new(JUNCTION)
        .args(args)
        .env("XDG_CONFIG_HOME", &home.0)
        .env(
            "BROWSER",
            format!("{} {}", peer("JUNCTION_NODE"), browser.display()),
        )
        .stdin(Stdio::null())
        .output()
        .expect("junction runs");
    common::Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
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
    let (_serve, url) = protected_library(&[
        "--auth-issuer",
        &provider.issuer,
        "--auth-scope",
        "mcp:read",
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
        "the tool result is in the transcript:\n{}",
        run.stderr
    );
    assert_eq!(run.stdout.trim(), "Done.");
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

    // The stored token works with `call --bearer`; a tampered one is refused, and not echoed.
    let call = junction_as(
        &home,
        &["call", &url, "--bearer", &token, "--method", "ping"],
    );
    assert_eq!(call.code, 0, "{}", call.stderr);
    let mut forged = token.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == 'A' { 'B' } else { 'A' });
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
