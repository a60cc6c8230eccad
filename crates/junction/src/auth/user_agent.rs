//! The user's side of the authorization code flow: sending the user to the authorization
//! URL and receiving the redirect that carries the code.
//!
//! A [`UserAgent`] first [`prepare`](UserAgent::prepare)s one redirect (its redirect URI is
//! registered and sent with the request), then [`PendingRedirect::complete`] takes the
//! authorization URL and returns the URL the authorization server redirected to.
//!
//! - [`LoopbackBrowser`]: for a person. Listens on `127.0.0.1` (a random port unless one is
//!   configured, RFC 8252 §7.3), shows the URL, opens it in the browser (`$BROWSER` first,
//!   else `xdg-open` / `open`), and waits for the redirect.
//! - [`FollowRedirects`]: unattended, for authorization servers that grant without asking
//!   (test servers, auto-consent policies): GETs the URL and follows redirects within the
//!   authorization server's origin until one points at the redirect URI. A redirect to any
//!   other origin is refused.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::LOCATION;
use reqwest::Url;
use tokio::sync::oneshot;

use super::metadata::{http_error, origin_of, without_query, Fetcher};
use super::AuthError;
use crate::session::BoxFuture;

/// How the user authorizes.
pub trait UserAgent: Send + Sync {
    /// Gets ready to receive one redirect.
    fn prepare(&self) -> BoxFuture<'_, Result<Box<dyn PendingRedirect>, AuthError>>;
}

/// One authorization in progress.
pub trait PendingRedirect: Send {
    /// The redirect URI to register and send.
    fn redirect_uri(&self) -> String;
    /// Sends the user to `authorization_url`; returns the URL redirected to.
    fn complete(
        self: Box<Self>,
        authorization_url: Url,
    ) -> BoxFuture<'static, Result<Url, AuthError>>;
}

/// The redirect URI [`FollowRedirects`] uses unless told otherwise.
pub const UNATTENDED_REDIRECT_URI: &str = "http://127.0.0.1/callback";

/// Follows the authorization server's redirects without a person (see the module docs).
#[derive(Debug, Clone)]
pub struct FollowRedirects {
    redirect_uri: String,
    fetcher: Fetcher,
}

/// How many redirects [`FollowRedirects`] follows.
const MAX_REDIRECTS: usize = 10;

impl FollowRedirects {
    /// With [`UNATTENDED_REDIRECT_URI`].
    pub fn new() -> Result<Self, AuthError> {
        Self::with_redirect_uri(UNATTENDED_REDIRECT_URI)
    }

    /// With the given redirect URI.
    pub fn with_redirect_uri(uri: &str) -> Result<Self, AuthError> {
        Ok(FollowRedirects {
            redirect_uri: uri.to_owned(),
            fetcher: Fetcher::new()?,
        })
    }
}

impl UserAgent for FollowRedirects {
    fn prepare(&self) -> BoxFuture<'_, Result<Box<dyn PendingRedirect>, AuthError>> {
        let pending = self.clone();
        Box::pin(async move { Ok(Box::new(pending) as Box<dyn PendingRedirect>) })
    }
}

impl PendingRedirect for FollowRedirects {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn complete(
        self: Box<Self>,
        authorization_url: Url,
    ) -> BoxFuture<'static, Result<Url, AuthError>> {
        Box::pin(async move {
            let redirect = Url::parse(&self.redirect_uri).map_err(|e| AuthError::Redirect {
                reason: format!("the redirect URI is not a URL: {e}"),
            })?;
            let server_origin = origin_of(&authorization_url);
            let mut url = authorization_url;
            for _ in 0..MAX_REDIRECTS {
                let response = self
                    .fetcher
                    .http()
                    .get(url.clone())
                    .send()
                    .await
                    .map_err(|e| http_error(&url, &e))?;
                let status = response.status();
                let Some(location) = response
                    .headers()
                    .get(LOCATION)
                    .and_then(|v| v.to_str().ok())
                else {
                    return Err(AuthError::Redirect {
                        reason: format!(
                            "{} answered HTTP {status} without redirecting (it wants a person: use a browser)",
                            without_query(&url)
                        ),
                    });
                };
                let next = url.join(location).map_err(|e| AuthError::Redirect {
                    reason: format!("the redirect location is not a URL: {e}"),
                })?;
                if is_redirect_uri(&next, &redirect) {
                    return Ok(next);
                }
                if origin_of(&next) != server_origin {
                    return Err(AuthError::Redirect {
                        reason: format!(
                            "the authorization server redirected to another origin ({}), not to the redirect URI",
                            origin_of(&next)
                        ),
                    });
                }
                url = next;
            }
            Err(AuthError::Redirect {
                reason: format!("more than {MAX_REDIRECTS} redirects"),
            })
        })
    }
}

/// Whether `url` is the redirect URI (same scheme, host, port and path; a loopback redirect
/// URI registered without a port matches any port, RFC 8252 §7.3).
fn is_redirect_uri(url: &Url, redirect: &Url) -> bool {
    url.scheme() == redirect.scheme()
        && url.host_str() == redirect.host_str()
        && (redirect.port().is_none() || url.port() == redirect.port())
        && url.path() == redirect.path()
}

/// Shows the authorization URL; the default prints it to stderr.
pub type Notify = Arc<dyn Fn(&Url) + Send + Sync>;

/// Receives the redirect on a loopback listener, for a person with a browser.
#[derive(Clone)]
pub struct LoopbackBrowser {
    port: u16,
    open_browser: bool,
    notify: Notify,
    timeout: Duration,
}

impl std::fmt::Debug for LoopbackBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackBrowser")
            .field("port", &self.port)
            .field("open_browser", &self.open_browser)
            .finish()
    }
}

impl Default for LoopbackBrowser {
    fn default() -> Self {
        LoopbackBrowser {
            port: 0,
            open_browser: true,
            notify: Arc::new(|url| {
                eprintln!("To authorize, open this URL in a browser:\n  {url}");
            }),
            timeout: Duration::from_secs(300),
        }
    }
}

impl LoopbackBrowser {
    /// Listens on this port (`0`: a random one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Whether to start a browser (else the URL is only shown).
    pub fn open_browser(mut self, open: bool) -> Self {
        self.open_browser = open;
        self
    }

    /// How the URL is shown.
    pub fn notify(mut self, notify: Notify) -> Self {
        self.notify = notify;
        self
    }

    /// How long to wait for the redirect.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

impl UserAgent for LoopbackBrowser {
    fn prepare(&self) -> BoxFuture<'_, Result<Box<dyn PendingRedirect>, AuthError>> {
        Box::pin(async move {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port))
                .await
                .map_err(|e| AuthError::Redirect {
                    reason: format!(
                        "cannot listen on 127.0.0.1:{} for the redirect: {e}",
                        self.port
                    ),
                })?;
            let port = listener
                .local_addr()
                .map_err(|e| AuthError::Redirect {
                    reason: e.to_string(),
                })?
                .port();
            Ok(Box::new(Listening {
                listener,
                redirect_uri: format!("http://127.0.0.1:{port}/callback"),
                agent: self.clone(),
            }) as Box<dyn PendingRedirect>)
        })
    }
}

struct Listening {
    listener: tokio::net::TcpListener,
    redirect_uri: String,
    agent: LoopbackBrowser,
}

impl PendingRedirect for Listening {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    fn complete(
        self: Box<Self>,
        authorization_url: Url,
    ) -> BoxFuture<'static, Result<Url, AuthError>> {
        Box::pin(async move {
            (self.agent.notify)(&authorization_url);
            if self.agent.open_browser {
                open_in_browser(&authorization_url);
            }
            let (tx, rx) = oneshot::channel::<Url>();
            let Listening {
                listener,
                redirect_uri,
                agent,
            } = *self;
            let server = tokio::spawn(serve_callback(listener, redirect_uri, tx));
            let outcome = tokio::time::timeout(agent.timeout, rx).await;
            // Let the page reach the browser before the listener goes away.
            tokio::time::sleep(Duration::from_millis(100)).await;
            server.abort();
            match outcome {
                Ok(Ok(url)) => Ok(url),
                Ok(Err(_)) => Err(AuthError::Redirect {
                    reason: "the redirect listener stopped".to_owned(),
                }),
                Err(_) => Err(AuthError::Redirect {
                    reason: format!(
                        "no authorization arrived within {} s",
                        agent.timeout.as_secs()
                    ),
                }),
            }
        })
    }
}

/// The largest request head the redirect listener reads.
const MAX_REQUEST_HEAD: usize = 8 * 1024;

/// How long a connection to the redirect listener may take to send its request head (a
/// browser's unused preconnect is closed then, not kept past the authorization).
const REQUEST_HEAD_TIMEOUT: Duration = Duration::from_secs(30);

/// The page the browser shows once the redirect arrived.
const RECEIVED_PAGE: &str = "<!doctype html><title>Junction</title><p>Authorization received. You can close this window and return to Junction.</p>";

/// Answers the browser's connections until one brings `GET /callback?...`, whose URL (the
/// query on `redirect_uri`) goes to `tx`. Each connection is served on its own task, because
/// a browser may open one it never sends on.
async fn serve_callback(
    listener: tokio::net::TcpListener,
    redirect_uri: String,
    tx: oneshot::Sender<Url>,
) {
    let tx = Arc::new(std::sync::Mutex::new(Some(tx)));
    let redirect_uri = Arc::new(redirect_uri);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!("the authorization redirect listener could not accept: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let tx = tx.clone();
        let redirect_uri = redirect_uri.clone();
        tokio::spawn(async move {
            let answer = answer_callback(stream, &redirect_uri, &tx);
            let _ = tokio::time::timeout(REQUEST_HEAD_TIMEOUT, answer).await;
        });
    }
}

/// Reads one request head (HTTP/1.x, at most [`MAX_REQUEST_HEAD`] bytes) and answers it:
/// `200` and a page for the callback path, `404` for anything else; then closes.
async fn answer_callback(
    mut stream: tokio::net::TcpStream,
    redirect_uri: &str,
    tx: &std::sync::Mutex<Option<oneshot::Sender<Url>>>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if head.len() > MAX_REQUEST_HEAD {
            return;
        }
    }
    let line = head.split(|b| *b == b'\r').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split(' ');
    let (method, target) = (parts.next(), parts.next().unwrap_or_default());
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let url = Url::parse(&format!("{redirect_uri}?{query}"));
    let response = match (method, url) {
        (Some("GET"), Ok(url)) if path == "/callback" => {
            if let Some(tx) = crate::sync::lock(tx).take() {
                let _ = tx.send(url);
            }
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{RECEIVED_PAGE}",
                RECEIVED_PAGE.len()
            )
        }
        _ => "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned(),
    };
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Starts the user's browser on `url`: `$BROWSER` (a command, `%s` replaced by the URL),
/// else the desktop's opener. Failing to start one is not an error: the URL was shown.
fn open_in_browser(url: &Url) {
    let text = url.as_str();
    let (program, args): (String, Vec<String>) = match std::env::var("BROWSER") {
        Ok(browser) if !browser.trim().is_empty() => {
            let mut parts = browser.split_whitespace().map(str::to_owned);
            let program = parts.next().unwrap_or_default();
            let mut args: Vec<String> = parts.collect();
            if args.iter().any(|a| a.contains("%s")) {
                args = args.iter().map(|a| a.replace("%s", text)).collect();
            } else {
                args.push(text.to_owned());
            }
            (program, args)
        }
        _ if cfg!(target_os = "macos") => ("open".to_owned(), vec![text.to_owned()]),
        _ => ("xdg-open".to_owned(), vec![text.to_owned()]),
    };
    match std::process::Command::new(&program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        Ok(mut child) => {
            tracing::debug!(%program, "browser started");
            // Reap it in the background so that no zombie stays behind.
            std::thread::spawn(move || {
                let _ = child.wait();
            });
        }
        Err(e) => tracing::debug!(%program, error = %e, "no browser started"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redirect_uri_matches_by_origin_and_path() {
        let r = Url::parse("http://127.0.0.1/callback").unwrap();
        assert!(is_redirect_uri(
            &Url::parse("http://127.0.0.1:5555/callback?code=x").unwrap(),
            &r
        ));
        assert!(!is_redirect_uri(
            &Url::parse("http://127.0.0.1:5555/other?code=x").unwrap(),
            &r
        ));
        assert!(!is_redirect_uri(
            &Url::parse("http://evil.example/callback?code=x").unwrap(),
            &r
        ));
        let fixed = Url::parse("http://127.0.0.1:4000/callback").unwrap();
        assert!(!is_redirect_uri(
            &Url::parse("http://127.0.0.1:4001/callback").unwrap(),
            &fixed
        ));
    }

    #[tokio::test]
    async fn the_loopback_listener_receives_the_redirect() {
        let agent = LoopbackBrowser::default()
            .open_browser(false)
            .notify(Arc::new(|_| {}));
        let pending = agent.prepare().await.unwrap();
        let redirect = pending.redirect_uri();
        assert!(redirect.starts_with("http://127.0.0.1:"));
        let waiting =
            tokio::spawn(pending.complete(Url::parse("https://as.example/authorize").unwrap()));
        // The "browser": follows the authorization server's redirect to the listener.
        let page = reqwest::get(format!("{redirect}?code=abc&state=xyz"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(page.contains("Authorization received"));
        let url = waiting.await.unwrap().unwrap();
        assert_eq!(url.query(), Some("code=abc&state=xyz"));
    }

    #[tokio::test]
    async fn the_loopback_listener_answers_other_paths_404_past_a_silent_connection() {
        let agent = LoopbackBrowser::default()
            .open_browser(false)
            .notify(Arc::new(|_| {}));
        let pending = agent.prepare().await.unwrap();
        let redirect = pending.redirect_uri();
        let waiting =
            tokio::spawn(pending.complete(Url::parse("https://as.example/authorize").unwrap()));
        let address = redirect
            .trim_start_matches("http://")
            .trim_end_matches("/callback");
        // A browser's preconnect: opened, never written to.
        let _silent = tokio::net::TcpStream::connect(address).await.unwrap();
        let other = reqwest::get(format!("http://{address}/favicon.ico"))
            .await
            .unwrap();
        assert_eq!(other.status(), reqwest::StatusCode::NOT_FOUND);
        let page = reqwest::get(format!("{redirect}?code=c")).await.unwrap();
        assert_eq!(page.status(), reqwest::StatusCode::OK);
        let url = waiting.await.unwrap().unwrap();
        assert_eq!(url.query(), Some("code=c"));
    }
}
