//! Authorization for `http` servers: the `oauth` member of a config entry, and the
//! [`OAuthClient`] each HTTP server gets.
//!
//! Every HTTP server is connected with an OAuth client: it sends nothing until the server
//! answers `401`, then runs the authorization flow ([`junction::auth`]): the authorization
//! URL is printed on stderr and opened in the browser (`$BROWSER`, else the desktop's
//! opener), a listener on `127.0.0.1` (a random port, or `callbackPort`) receives the code,
//! and the tokens are kept in the user's credential file
//! ([`FileTokenStore::default_path`]) and refreshed. Entries may name a pre-registered
//! client, as Claude Code and VS Code do:
//!
//! ```json
//! { "mcpServers": { "team": { "type": "http", "url": "https://mcp.example.com/mcp",
//!   "oauth": { "clientId": "junction", "clientSecret": "${TEAM_SECRET}",
//!              "scopes": ["files:read"], "callbackPort": 8976 } } } }
//! ```
//!
//! In an enterprise whose identity provider grants access to MCP servers (cross-app access,
//! SEP-990), `crossApp` says where the ID token of the user's sign-in comes from (an
//! environment variable the sign-in tool sets) and how Junction is known to the IdP; the
//! client above is then the one registered with the MCP server's authorization server, and
//! no browser opens:
//!
//! ```json
//! "oauth": { "clientId": "junction", "clientSecret": "${TEAM_SECRET}",
//!   "crossApp": { "idpIssuer": "https://idp.example.com", "idpClientId": "junction-host",
//!                 "idpClientSecret": "${IDP_SECRET}", "idToken": "${IDP_ID_TOKEN}" } }
//! ```
//!
//! (`idpTokenEndpoint` skips the IdP's discovery.)
//!
//! A workload with no person at hand (a Kubernetes pod, a CI job) presents the JWT its
//! platform issued it instead (workload identity federation, SEP-1933), read from a file
//! each time a token is needed (`tokenFile`: Kubernetes rotates it in place), from an
//! environment variable (`tokenEnv`) or given as is (`token`, use `${VAR}`); exactly one
//! of the three. `clientId` names the workload at the authorization server if it wants one:
//!
//! ```json
//! "oauth": { "clientId": "my-agent",
//!   "workload": { "tokenFile": "/var/run/secrets/tokens/mcp-token" } }
//! ```

use std::sync::Arc;

use junction::auth::{
    CrossAppAccess, FileTokenStore, LoopbackBrowser, MemoryTokenStore, OAuthClient, OAuthConfig,
    PreRegistered, RegisteredClient, TokenStatus, TokenStore, Url, WorkloadIdentity, WorkloadToken,
};
use serde_json::{Map, Value};

/// The `oauth` member of an `http` entry (its `Debug` hides the secrets).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthSettings {
    /// A client registered with the server's authorization server beforehand.
    pub client_id: Option<String>,
    /// Its secret (use `${VAR}`).
    pub client_secret: Option<String>,
    /// Scopes to ask for when the server's challenge names none.
    pub scopes: Option<Vec<String>>,
    /// The loopback port of the redirect listener (random when absent).
    pub callback_port: Option<u16>,
    /// Cross-app access through the enterprise IdP (`crossApp`).
    pub cross_app: Option<CrossAppSettings>,
    /// Workload identity federation: where the platform's JWT is (`workload`).
    pub workload: Option<WorkloadToken>,
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("scopes", &self.scopes)
            .field("callback_port", &self.callback_port)
            .field("cross_app", &self.cross_app)
            .field("workload", &self.workload)
            .finish()
    }
}

/// The `oauth.crossApp` member: the enterprise IdP and the ID token to exchange there.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct CrossAppSettings {
    /// The IdP's issuer URL.
    pub idp_issuer: String,
    /// Its token endpoint, when discovery is to be skipped.
    pub idp_token_endpoint: Option<String>,
    /// Junction's client id at the IdP.
    pub idp_client_id: String,
    /// Its secret there (use `${VAR}`).
    pub idp_client_secret: Option<String>,
    /// The ID token of the user's sign-in (use `${VAR}`).
    pub id_token: String,
}

impl std::fmt::Debug for CrossAppSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossAppSettings")
            .field("idp_issuer", &self.idp_issuer)
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_client_id", &self.idp_client_id)
            .field(
                "idp_client_secret",
                &self.idp_client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("id_token", &"<redacted>")
            .finish()
    }
}

impl CrossAppSettings {
    fn parse(value: Option<&Value>) -> Result<Option<CrossAppSettings>, (String, String)> {
        let map: &Map<String, Value> = match value {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(("oauth.crossApp".into(), "expected an object".into())),
        };
        let text = |key: &str| -> Result<Option<String>, (String, String)> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err((format!("oauth.crossApp.{key}"), "expected a string".into())),
            }
        };
        let required = |key: &str| -> Result<String, (String, String)> {
            text(key)?.ok_or_else(|| (format!("oauth.crossApp.{key}"), "is required".into()))
        };
        Ok(Some(CrossAppSettings {
            idp_issuer: required("idpIssuer")?,
            idp_token_endpoint: text("idpTokenEndpoint")?,
            idp_client_id: required("idpClientId")?,
            idp_client_secret: text("idpClientSecret")?,
            id_token: required("idToken")?,
        }))
    }
}

/// The `oauth.workload` member: exactly one of `tokenFile`, `tokenEnv`, `token`.
fn parse_workload(value: Option<&Value>) -> Result<Option<WorkloadToken>, (String, String)> {
    let map: &Map<String, Value> = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(("oauth.workload".into(), "expected an object".into())),
    };
    const KEYS: [&str; 3] = ["tokenFile", "tokenEnv", "token"];
    if let Some(other) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err((
            format!("oauth.workload.{other}"),
            "is not a member (tokenFile, tokenEnv or token)".into(),
        ));
    }
    let mut given = KEYS.iter().filter_map(|key| match map.get(*key) {
        None | Some(Value::Null) => None,
        Some(value) => Some((*key, value)),
    });
    let (key, value) = match (given.next(), given.next()) {
        (Some(one), None) => one,
        (None, _) => {
            return Err((
                "oauth.workload".into(),
                "needs one of tokenFile, tokenEnv or token".into(),
            ))
        }
        (Some(_), Some(_)) => {
            return Err((
                "oauth.workload".into(),
                "takes only one of tokenFile, tokenEnv and token".into(),
            ))
        }
    };
    let text = value
        .as_str()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| {
            (
                format!("oauth.workload.{key}"),
                "expected a non-empty string".into(),
            )
        })?
        .to_owned();
    Ok(Some(match key {
        "tokenFile" => WorkloadToken::File(text.into()),
        "tokenEnv" => WorkloadToken::Env(text),
        _ => WorkloadToken::Value(text),
    }))
}

impl OAuthSettings {
    /// Reads the `oauth` object, its strings as written (see [`OAuthSettings::expand`]). An
    /// error names the field and what is wrong.
    pub fn parse(value: Option<&Value>) -> Result<Option<OAuthSettings>, (String, String)> {
        let map: &Map<String, Value> = match value {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(map)) => map,
            Some(_) => return Err(("oauth".into(), "expected an object".into())),
        };
        let text = |key: &str| -> Result<Option<String>, (String, String)> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err((format!("oauth.{key}"), "expected a string".into())),
            }
        };
        let scopes = match map.get("scopes") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.split_whitespace().map(str::to_owned).collect()),
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| ("oauth.scopes".to_owned(), "expected strings".to_owned()))?,
            ),
            Some(_) => return Err(("oauth.scopes".into(), "expected a list of scopes".into())),
        };
        let callback_port =
            match map.get("callbackPort") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.as_u64().and_then(|p| u16::try_from(p).ok()).ok_or_else(
                    || {
                        (
                            "oauth.callbackPort".to_owned(),
                            "expected a port number".to_owned(),
                        )
                    },
                )?),
            };
        let settings = OAuthSettings {
            client_id: text("clientId")?,
            client_secret: text("clientSecret")?,
            scopes,
            callback_port,
            cross_app: CrossAppSettings::parse(map.get("crossApp"))?,
            workload: parse_workload(map.get("workload"))?,
        };
        if settings.client_secret.is_some() && settings.client_id.is_none() {
            return Err((
                "oauth.clientSecret".into(),
                "given without oauth.clientId".into(),
            ));
        }
        if settings.cross_app.is_some() && settings.client_id.is_none() {
            return Err((
                "oauth.crossApp".into(),
                "needs oauth.clientId (the client registered with the server's authorization server)".into(),
            ));
        }
        if settings.cross_app.is_some() && settings.workload.is_some() {
            return Err((
                "oauth.workload".into(),
                "cannot be given with oauth.crossApp (one grant per server)".into(),
            ));
        }
        Ok(Some(settings))
    }

    /// Resolves `${VAR}` in the client id, the secret, the scopes, `crossApp` and the
    /// workload's `token` and `tokenFile` (not `tokenEnv`, a variable's name) with `expand`, which is
    /// given each field's name (`oauth.clientSecret`) and text; a scope that expands to
    /// several words becomes several scopes.
    pub fn expand<E>(self, expand: impl Fn(&str, &str) -> Result<String, E>) -> Result<Self, E> {
        let one = |field: &str, text: Option<String>| -> Result<Option<String>, E> {
            text.map(|t| expand(field, &t)).transpose()
        };
        let scopes = match self.scopes {
            None => None,
            Some(scopes) => {
                let mut all = Vec::new();
                for scope in scopes {
                    let expanded = expand("oauth.scopes", &scope)?;
                    all.extend(expanded.split_whitespace().map(str::to_owned));
                }
                Some(all)
            }
        };
        let cross_app = match self.cross_app {
            None => None,
            Some(c) => Some(CrossAppSettings {
                idp_issuer: expand("oauth.crossApp.idpIssuer", &c.idp_issuer)?,
                idp_token_endpoint: one("oauth.crossApp.idpTokenEndpoint", c.idp_token_endpoint)?,
                idp_client_id: expand("oauth.crossApp.idpClientId", &c.idp_client_id)?,
                idp_client_secret: one("oauth.crossApp.idpClientSecret", c.idp_client_secret)?,
                id_token: expand("oauth.crossApp.idToken", &c.id_token)?,
            }),
        };
        let workload = match self.workload {
            Some(WorkloadToken::File(path)) => Some(WorkloadToken::File(
                expand("oauth.workload.tokenFile", &path.to_string_lossy())?.into(),
            )),
            Some(WorkloadToken::Value(token)) => Some(WorkloadToken::Value(expand(
                "oauth.workload.token",
                &token,
            )?)),
            other => other,
        };
        Ok(OAuthSettings {
            client_id: one("oauth.clientId", self.client_id)?,
            client_secret: one("oauth.clientSecret", self.client_secret)?,
            scopes,
            callback_port: self.callback_port,
            cross_app,
            workload,
        })
    }
}

/// What is stored of a server's authorization, for a person: who granted it, the scopes,
/// the expiry; never a token. `None`: nothing is stored.
pub fn describe(status: Option<&TokenStatus>) -> String {
    let Some(status) = status else {
        return "not authorized".to_owned();
    };
    let mut text = format!("authorized by {}", status.issuer);
    if let Some(scope) = &status.scope {
        text.push_str(&format!(", scopes {scope}"));
    }
    if let Some(at) = status.expires_at {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        if at > now {
            text.push_str(&format!(", expires in {} s", at - now));
        } else {
            text.push_str(", expired");
        }
    }
    if status.refreshable {
        text.push_str(" (refreshable)");
    }
    text
}

/// The variable that chooses the credential store: `file` (the default) or `keyring` (the
/// OS keyring, in builds with the `keyring` feature).
pub const TOKEN_STORE_VARIABLE: &str = "JUNCTION_TOKEN_STORE";

/// The credential store of this user: the file under the config directory (or the OS
/// keyring, see [`TOKEN_STORE_VARIABLE`]), else (with no home directory) one kept in memory
/// for this process.
pub fn user_store() -> Arc<dyn TokenStore> {
    match std::env::var(TOKEN_STORE_VARIABLE).as_deref() {
        #[cfg(feature = "keyring")]
        Ok("keyring") => return Arc::new(junction::auth::KeyringTokenStore::for_user()),
        Ok("file") | Err(_) => {}
        Ok(other) => tracing::warn!(
            store = other,
            "{TOKEN_STORE_VARIABLE} names a store this build does not have (file{}); using the file",
            if cfg!(feature = "keyring") { ", keyring" } else { "" }
        ),
    }
    match FileTokenStore::in_config_dir() {
        Ok(store) => Arc::new(store),
        Err(e) => {
            tracing::warn!(error = %e, "credentials will not be kept after this process");
            Arc::new(MemoryTokenStore::default())
        }
    }
}

/// The OAuth client of the server at `url`, authorizing through the browser.
pub fn oauth_client(
    url: &str,
    settings: Option<&OAuthSettings>,
    store: Arc<dyn TokenStore>,
) -> Result<Arc<OAuthClient>, String> {
    let endpoint = Url::parse(url).map_err(|e| format!("{url} is not a URL: {e}"))?;
    let mut config = OAuthConfig::new("Junction");
    let mut browser = LoopbackBrowser::default();
    if let Some(settings) = settings {
        config.scopes = settings.scopes.clone();
        config.pre_registered = settings.client_id.clone().map(|client_id| PreRegistered {
            client: RegisteredClient {
                client_id,
                client_secret: settings.client_secret.clone(),
                ..RegisteredClient::default()
            },
            issuer: None,
        });
        config.cross_app = settings.cross_app.as_ref().map(|c| CrossAppAccess {
            idp_issuer: c.idp_issuer.clone(),
            idp_token_endpoint: c.idp_token_endpoint.clone(),
            idp_client: RegisteredClient {
                client_id: c.idp_client_id.clone(),
                client_secret: c.idp_client_secret.clone(),
                ..RegisteredClient::default()
            },
            id_token: c.id_token.clone(),
        });
        config.workload = settings.workload.as_ref().map(|token| WorkloadIdentity {
            client_id: settings.client_id.clone(),
            token: token.clone(),
        });
        if let Some(port) = settings.callback_port {
            browser = browser.port(port);
        }
    }
    OAuthClient::new(&endpoint, config, store, Arc::new(browser)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Option<OAuthSettings>, (String, String)> {
        OAuthSettings::parse(Some(&v)).map(|o| {
            o.map(|o| {
                let expanded = o.expand(|_, s| {
                    Ok::<_, std::convert::Infallible>(s.replace("${SECRET}", "s3cret"))
                });
                match expanded {
                    Ok(o) => o,
                    Err(never) => match never {},
                }
            })
        })
    }

    #[test]
    fn the_oauth_member_is_read_with_variables() {
        let got = parse(json!({"clientId": "id", "clientSecret": "${SECRET}", "scopes": ["a", "b"], "callbackPort": 8976}))
            .unwrap()
            .unwrap();
        assert_eq!(got.client_id.as_deref(), Some("id"));
        assert_eq!(got.client_secret.as_deref(), Some("s3cret"));
        assert_eq!(got.scopes, Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(got.callback_port, Some(8976));
        assert_eq!(
            parse(json!({"scopes": "x y"}))
                .unwrap()
                .unwrap()
                .scopes
                .unwrap()
                .len(),
            2
        );
        assert_eq!(OAuthSettings::parse(None), Ok(None));
    }

    #[test]
    fn cross_app_access_is_read_with_variables_and_needs_the_client() {
        let got = parse(
            json!({"clientId": "id", "clientSecret": "${SECRET}", "crossApp": {
            "idpIssuer": "https://idp.example", "idpClientId": "host", "idToken": "${SECRET}"}}),
        )
        .unwrap()
        .unwrap();
        let cross = got.cross_app.as_ref().unwrap();
        assert_eq!(cross.id_token, "s3cret");
        assert_eq!(cross.idp_client_id, "host");
        assert_eq!(cross.idp_token_endpoint, None);
        assert!(!format!("{got:?}").contains("s3cret"), "{got:?}");
        let client = oauth_client(
            "https://mcp.example/mcp",
            Some(&got),
            Arc::new(MemoryTokenStore::default()),
        );
        assert!(client.is_ok());
        assert_eq!(
            parse(json!({"crossApp": {"idpIssuer": "i", "idpClientId": "c", "idToken": "t"}}))
                .unwrap_err()
                .0,
            "oauth.crossApp"
        );
        assert_eq!(
            parse(json!({"clientId": "id", "crossApp": {"idpIssuer": "i", "idToken": "t"}}))
                .unwrap_err()
                .0,
            "oauth.crossApp.idpClientId"
        );
    }

    #[test]
    fn a_workload_token_is_read_from_one_place_with_variables() {
        let got = parse(json!({"clientId": "agent", "workload": {"token": "${SECRET}"}}))
            .unwrap()
            .unwrap();
        assert_eq!(got.workload, Some(WorkloadToken::Value("s3cret".into())));
        assert!(!format!("{got:?}").contains("s3cret"), "{got:?}");
        let file = parse(json!({"workload": {"tokenFile": "/run/${SECRET}/token"}}))
            .unwrap()
            .unwrap();
        assert_eq!(
            file.workload,
            Some(WorkloadToken::File("/run/s3cret/token".into()))
        );
        let env = parse(json!({"workload": {"tokenEnv": "${SECRET}"}}))
            .unwrap()
            .unwrap();
        assert_eq!(
            env.workload,
            Some(WorkloadToken::Env("${SECRET}".into())),
            "a variable's name is not expanded"
        );
        assert!(oauth_client(
            "https://mcp.example/mcp",
            Some(&got),
            Arc::new(MemoryTokenStore::default())
        )
        .is_ok());

        let refused = |v: Value| parse(v).unwrap_err();
        assert_eq!(
            refused(json!({"workload": {}})),
            (
                "oauth.workload".into(),
                "needs one of tokenFile, tokenEnv or token".into()
            )
        );
        assert_eq!(
            refused(json!({"workload": {"tokenFile": "/a", "tokenEnv": "B"}})),
            (
                "oauth.workload".into(),
                "takes only one of tokenFile, tokenEnv and token".into()
            )
        );
        assert_eq!(
            refused(json!({"workload": {"tokenPath": "/a"}})).0,
            "oauth.workload.tokenPath"
        );
        assert_eq!(
            refused(json!({"workload": {"tokenFile": ""}})).0,
            "oauth.workload.tokenFile"
        );
        assert_eq!(
            refused(json!({"workload": {"tokenEnv": 3}})).0,
            "oauth.workload.tokenEnv"
        );
        assert_eq!(refused(json!({"workload": "/a"})).0, "oauth.workload");
        assert_eq!(
            refused(
                json!({"clientId": "c", "workload": {"token": "t"}, "crossApp": {
                "idpIssuer": "i", "idpClientId": "c", "idToken": "t"}})
            )
            .0,
            "oauth.workload"
        );
    }

    #[test]
    fn bad_oauth_members_name_their_field() {
        assert_eq!(
            parse(json!({"callbackPort": 70000})).unwrap_err().0,
            "oauth.callbackPort"
        );
        assert_eq!(
            parse(json!({"clientId": 3})).unwrap_err().0,
            "oauth.clientId"
        );
        assert_eq!(
            parse(json!({"clientSecret": "x"})).unwrap_err().0,
            "oauth.clientSecret"
        );
        assert_eq!(parse(json!("nope")).unwrap_err().0, "oauth");
    }
}
