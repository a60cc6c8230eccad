//! Reaching a server by URL: Streamable HTTP, or the 2024-11-05 HTTP+SSE transport when the
//! path ends in `/sse`, with the user's headers on every request. With `--bearer TOKEN` the
//! token goes in `Authorization`; otherwise a `401` is answered with the OAuth flow and the
//! user's stored credentials ([`junction_host::auth`]).

use std::time::Duration;

use anyhow::{anyhow, bail};
use junction::transport::http::client::{Finished, HttpClient};
use junction::transport::Connection;

use super::CallArgs;

/// How long closing waits for the session's `DELETE` before the command exits anyway.
const DELETE_WAIT: Duration = Duration::from_secs(5);

/// Parses `--header`: `NAME: VALUE` or `NAME:VALUE`.
pub fn header(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(format!("expected NAME: VALUE, got {text:?}")),
    }
}

/// Whether `url`'s path names a legacy HTTP+SSE endpoint.
fn is_legacy(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.trim_end_matches('/').ends_with("/sse")
}

/// Starts the transport to `url`, refusing the flags that only apply to a spawned server.
pub fn connect(url: &str, args: &CallArgs) -> anyhow::Result<(Connection, Finished)> {
    if !url.starts_with("http://") && !url.starts_with("https://") {
        bail!("{url}: not an http:// or https:// URL; give a command to run the server after `--`");
    }
    if !args.env.is_empty() {
        bail!("--env is for servers started as a command; {url} is reached over HTTP");
    }
    if args.cwd.is_some() {
        bail!("--cwd is for servers started as a command; {url} is reached over HTTP");
    }
    let mut client = HttpClient::new(url).map_err(|e| anyhow!("{e}"))?;
    for (name, value) in &args.header {
        client = client
            .header(name, value)
            .map_err(|e| anyhow!("--header {name}: {e}"))?;
    }
    match &args.bearer {
        Some(token) => {
            client = client
                .header("authorization", &format!("Bearer {token}"))
                .map_err(|_| anyhow!("--bearer: the token is not a valid header value"))?;
        }
        None => {
            let oauth =
                junction_host::auth::oauth_client(url, None, junction_host::auth::user_store())
                    .map_err(|e| anyhow!(e))?;
            client = client.oauth(oauth);
        }
    }
    if is_legacy(url) {
        client = client.legacy();
    }
    Ok(client.start())
}

/// Waits, within reason, for the transport to end the session on the server.
pub async fn finish(finished: Finished) {
    if tokio::time::timeout(DELETE_WAIT, finished.wait())
        .await
        .is_err()
    {
        tracing::warn!("the session could not be ended on the server in time");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_take_a_colon_with_or_without_a_space() {
        assert_eq!(
            header("Authorization: Bearer a:b"),
            Ok(("Authorization".to_owned(), "Bearer a:b".to_owned()))
        );
        assert_eq!(
            header("X-Test:1"),
            Ok(("X-Test".to_owned(), "1".to_owned()))
        );
        assert!(header("no colon").unwrap_err().contains("NAME: VALUE"));
        assert!(header(": value").is_err());
    }

    #[test]
    fn an_sse_path_selects_the_legacy_transport() {
        assert!(is_legacy("http://127.0.0.1:3001/sse"));
        assert!(is_legacy("http://127.0.0.1:3001/a/sse/?x=1"));
        assert!(!is_legacy("http://127.0.0.1:3001/mcp"));
        assert!(!is_legacy("http://127.0.0.1:3001/ssex"));
    }
}
