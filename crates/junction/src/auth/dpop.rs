//! DPoP (RFC 9449, SEP-1932): access tokens bound to a key the client holds, so a stolen
//! token is useless without the key.
//!
//! When the authorization server lists `ES256` in `dpop_signing_alg_values_supported`, the
//! client keeps an ES256 key for that issuer ([`DpopKey`], stored with its clients) and
//! sends a fresh proof (a JWT of type `dpop+jwt` with the public key in its `jwk` header,
//! signed by the key) in the `DPoP` header of every token request and every request to the
//! resource. A proof names the request (`htm`, `htu` without query or fragment), its time
//! (`iat`) and a random `jti`; at the resource it also carries `ath`, the hash of the access
//! token, and the token goes as `Authorization: DPoP <token>`.
//!
//! A server may ask for a nonce: it answers `use_dpop_nonce` with a `DPoP-Nonce` header,
//! and the request is sent again with a proof carrying that nonce ([`Nonces`] remembers the
//! latest one per server, as §8 and §9 describe).
//!
//! The resource server's side: [`verify_proof`] checks a proof, and [`ServerNonces`] are
//! the nonces a resource server that wants them issues.
//!
//! ```
//! use junction::auth::{dpop::DpopKey, Url};
//!
//! let key = DpopKey::generate().unwrap();
//! let url = Url::parse("https://mcp.example.com/mcp?x=1").unwrap();
//! let proof = key.proof("POST", &url, Some("the-access-token"), None).unwrap();
//! assert_eq!(proof.split('.').count(), 3);
//! assert_eq!(key.thumbprint().len(), 43);
//! ```

#[cfg(feature = "http-client")]
use std::collections::BTreeMap;
#[cfg(feature = "http-client")]
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
#[cfg(feature = "http-client")]
use reqwest::header::HeaderMap;
#[cfg(feature = "http-client")]
use ring::rand::SystemRandom;
#[cfg(feature = "http-client")]
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
#[cfg(feature = "http-client")]
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};
use url::Url;

#[cfg(feature = "http-client")]
use super::metadata::origin_of;
use super::metadata::AuthorizationServerMetadata;
use super::pkce::random_token;
use super::AuthError;
use crate::sync::lock;

/// The only algorithm the client signs proofs with.
pub const ALGORITHM: &str = "ES256";
/// The header a proof travels in.
pub const DPOP_HEADER: &str = "DPoP";
/// The header a server names its nonce in.
pub const NONCE_HEADER: &str = "DPoP-Nonce";
/// The error a server answers when a proof lacks its (current) nonce.
pub const USE_NONCE: &str = "use_dpop_nonce";

/// Whether the authorization server issues DPoP-bound tokens for ES256 proofs.
pub fn supported(server: &AuthorizationServerMetadata) -> bool {
    server
        .dpop_signing_alg_values_supported
        .as_deref()
        .is_some_and(|algs| algs.iter().any(|a| a == ALGORITHM))
}

#[cfg(feature = "http-client")]
/// An ES256 (P-256) key pair that signs DPoP proofs. Stored as its PKCS#8 document,
/// base64url; printed without it.
#[derive(Clone)]
pub struct DpopKey {
    pkcs8: Vec<u8>,
    pair: std::sync::Arc<EcdsaKeyPair>,
}

#[cfg(feature = "http-client")]
impl PartialEq for DpopKey {
    fn eq(&self, other: &Self) -> bool {
        self.pkcs8 == other.pkcs8
    }
}

#[cfg(feature = "http-client")]
impl Eq for DpopKey {}

#[cfg(feature = "http-client")]
impl fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DpopKey")
            .field("jkt", &self.thumbprint())
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "http-client")]
fn key_error(reason: impl fmt::Display) -> AuthError {
    AuthError::Dpop(format!("the DPoP key is not usable: {reason}"))
}

#[cfg(feature = "http-client")]
impl DpopKey {
    /// A fresh key from the OS's CSPRNG.
    pub fn generate() -> Result<DpopKey, AuthError> {
        let rng = SystemRandom::new();
        let document = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| AuthError::Random("no key could be generated".to_owned()))?;
        DpopKey::from_pkcs8(document.as_ref())
    }

    /// The key in a PKCS#8 document (DER).
    pub fn from_pkcs8(pkcs8: &[u8]) -> Result<DpopKey, AuthError> {
        let pair = EcdsaKeyPair::from_pkcs8(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            pkcs8,
            &SystemRandom::new(),
        )
        .map_err(key_error)?;
        Ok(DpopKey {
            pkcs8: pkcs8.to_vec(),
            pair: std::sync::Arc::new(pair),
        })
    }

    /// The public key as a JWK (`kty`, `crv`, `x`, `y`), members in the order RFC 7638
    /// hashes them.
    pub fn jwk(&self) -> serde_json::Value {
        // An uncompressed P-256 point: 0x04, then 32 bytes of x and 32 of y.
        let point = self.pair.public_key().as_ref();
        let (x, y) = point[1..].split_at(32);
        serde_json::json!({
            "crv": "P-256",
            "kty": "EC",
            "x": URL_SAFE_NO_PAD.encode(x),
            "y": URL_SAFE_NO_PAD.encode(y),
        })
    }

    /// The JWK SHA-256 thumbprint (RFC 7638), what a bound token's `cnf.jkt` names.
    pub fn thumbprint(&self) -> String {
        thumbprint(&self.jwk()).unwrap_or_default()
    }

    /// A fresh proof for a `method` request to `url`; with `access_token` it carries `ath`,
    /// with `nonce` the server's nonce.
    pub fn proof(
        &self,
        method: &str,
        url: &Url,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthError> {
        let header = serde_json::json!({"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.jwk()});
        let mut claims = serde_json::json!({
            "jti": random_token()?,
            "htm": method,
            "htu": htu(url),
            "iat": super::now_seconds(),
        });
        if let Some(token) = access_token {
            claims["ath"] = ath(token).into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(key_error)?;
        Ok(format!(
            "{input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }
}

#[cfg(feature = "http-client")]
impl Serialize for DpopKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&URL_SAFE_NO_PAD.encode(&self.pkcs8))
    }
}

#[cfg(feature = "http-client")]
impl<'de> Deserialize<'de> for DpopKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<DpopKey, D::Error> {
        let text = String::deserialize(deserializer)?;
        let der = URL_SAFE_NO_PAD
            .decode(text.as_bytes())
            .map_err(serde::de::Error::custom)?;
        DpopKey::from_pkcs8(&der).map_err(serde::de::Error::custom)
    }
}

/// The RFC 7638 thumbprint of a public JWK: SHA-256 of its required members, in
/// lexicographic order without whitespace; `None` for a key type DPoP does not use.
pub fn thumbprint(jwk: &serde_json::Value) -> Option<String> {
    let member = |name: &str| jwk.get(name).and_then(serde_json::Value::as_str);
    let quoted = |name: &str| member(name).map(|v| serde_json::Value::from(v).to_string());
    let text = match member("kty")? {
        "EC" => format!(
            r#"{{"crv":{},"kty":"EC","x":{},"y":{}}}"#,
            quoted("crv")?,
            quoted("x")?,
            quoted("y")?
        ),
        "RSA" => format!(
            r#"{{"e":{},"kty":"RSA","n":{}}}"#,
            quoted("e")?,
            quoted("n")?
        ),
        "OKP" => format!(
            r#"{{"crv":{},"kty":"OKP","x":{}}}"#,
            quoted("crv")?,
            quoted("x")?
        ),
        _ => return None,
    };
    Some(URL_SAFE_NO_PAD.encode(Sha256::digest(text.as_bytes())))
}

/// What a proof that verified says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedProof {
    /// Its unique id, to refuse it the second time.
    pub jti: String,
    /// When it was made.
    pub iat: u64,
    /// The thumbprint of the key that signed it.
    pub thumbprint: String,
    /// The server nonce it carries (RFC 9449 §9), if any.
    pub nonce: Option<String>,
}

/// The algorithms [`verify_proof`] accepts: every asymmetric one (never `none`, never an
/// HMAC), named in resource servers' challenges and metadata.
pub const ACCEPTED_ALGORITHMS: &[&str] = &[
    "ES256", "ES384", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA",
];

/// How far a proof's `iat` may be from the clock, in seconds.
pub const PROOF_WINDOW: u64 = 300;

/// Checks a proof as a resource server does (RFC 9449 §4.3, §7): a `dpop+jwt` signed with
/// an asymmetric algorithm by the public key in its `jwk` header, for a `method` request to
/// `htu` (compared without query and fragment), made within [`PROOF_WINDOW`] of `now`,
/// with the `ath` of `access_token`. Replays and the token's `cnf.jkt` are the caller's to
/// check. The error says what is wrong, for the `error_description`.
pub fn verify_proof(
    proof: &str,
    method: &str,
    htu_expected: &str,
    access_token: &str,
    now: u64,
) -> Result<VerifiedProof, String> {
    use jsonwebtoken::Algorithm;
    let header_json: serde_json::Value = proof
        .split('.')
        .next()
        .and_then(|h| URL_SAFE_NO_PAD.decode(h).ok())
        .and_then(|h| serde_json::from_slice(&h).ok())
        .ok_or("the DPoP proof is not a JWT")?;
    if header_json.get("typ").and_then(serde_json::Value::as_str) != Some("dpop+jwt") {
        return Err("the DPoP proof's typ is not dpop+jwt".to_owned());
    }
    let jwk_json = header_json
        .get("jwk")
        .ok_or("the DPoP proof carries no jwk")?;
    if jwk_json.get("d").is_some() {
        return Err("the DPoP proof's jwk contains a private key".to_owned());
    }
    let header =
        jsonwebtoken::decode_header(proof).map_err(|_| "the DPoP proof's header is not valid")?;
    if matches!(
        header.alg,
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
    ) {
        return Err("the DPoP proof is not signed with an asymmetric algorithm".to_owned());
    }
    let jwk = header
        .jwk
        .as_ref()
        .ok_or("the DPoP proof's jwk is not a usable public key")?;
    let key = jsonwebtoken::DecodingKey::from_jwk(jwk)
        .map_err(|_| "the DPoP proof's jwk is not a usable public key")?;
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    validation.validate_aud = false;
    let claims = jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(
        proof,
        &key,
        &validation,
    )
    .map_err(|_| "the DPoP proof's signature does not verify")?
    .claims;
    let text = |name: &str| claims.get(name).and_then(serde_json::Value::as_str);
    let jti = text("jti")
        .filter(|j| !j.is_empty())
        .ok_or("the DPoP proof has no jti")?;
    if text("htm") != Some(method) {
        return Err(format!(
            "the DPoP proof is not for a {method} request (htm)"
        ));
    }
    let same_target = match (text("htu").map(Url::parse), Url::parse(htu_expected)) {
        (Some(Ok(claimed)), Ok(expected)) => htu(&claimed) == htu(&expected),
        _ => false,
    };
    if !same_target {
        return Err("the DPoP proof is for another URL (htu)".to_owned());
    }
    let iat = claims
        .get("iat")
        .and_then(serde_json::Value::as_u64)
        .ok_or("the DPoP proof has no iat")?;
    if iat.abs_diff(now) > PROOF_WINDOW {
        return Err("the DPoP proof is too old or from the future (iat)".to_owned());
    }
    if text("ath") != Some(ath(access_token).as_str()) {
        return Err("the DPoP proof is not for this access token (ath)".to_owned());
    }
    Ok(VerifiedProof {
        jti: jti.to_owned(),
        iat,
        thumbprint: thumbprint(jwk_json).ok_or("the DPoP proof's jwk has an unknown key type")?,
        nonce: text("nonce").map(str::to_owned),
    })
}

/// The `htu` of a request: its URL without query and fragment (RFC 9449 §4.2).
pub fn htu(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// The `ath` of an access token: `BASE64URL(SHA-256(token))`.
pub fn ath(access_token: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(access_token.as_bytes()))
}

#[cfg(feature = "http-client")]
/// The latest nonce each server (by origin) gave.
#[derive(Debug, Default)]
pub struct Nonces(Mutex<BTreeMap<String, String>>);

#[cfg(feature = "http-client")]
impl Nonces {
    /// The nonce to put in a proof for `url`.
    pub fn get(&self, url: &Url) -> Option<String> {
        lock(&self.0).get(&origin_of(url)).cloned()
    }

    /// Keeps the `DPoP-Nonce` of an answer from `url`; returns whether it is a new one.
    pub fn observe(&self, url: &Url, headers: &HeaderMap) -> bool {
        let Some(nonce) = headers
            .get(NONCE_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|n| !n.is_empty())
        else {
            return false;
        };
        let previous = lock(&self.0).insert(origin_of(url), nonce.to_owned());
        previous.as_deref() != Some(nonce)
    }
}

/// How long a server nonce stays the current one; the one before it is accepted for as
/// long again, so a proof made just before a rotation still passes.
pub const NONCE_LIFETIME: Duration = Duration::from_secs(PROOF_WINDOW);

/// The nonces a resource server issues (RFC 9449 §9): a random value, replaced every
/// [`NONCE_LIFETIME`]; a proof must carry the current one or the one before it. They are
/// kept in this process: instances behind one load balancer each have their own.
#[derive(Debug)]
pub struct ServerNonces {
    state: Mutex<NonceState>,
}

#[derive(Debug)]
struct NonceState {
    current: String,
    previous: Option<String>,
    issued: Instant,
}

impl ServerNonces {
    /// A first nonce from the OS's CSPRNG.
    pub fn new() -> Result<ServerNonces, AuthError> {
        Ok(ServerNonces {
            state: Mutex::new(NonceState {
                current: random_token()?,
                previous: None,
                issued: Instant::now(),
            }),
        })
    }

    /// The nonce to give clients now.
    pub fn current(&self) -> String {
        self.current_at(Instant::now())
    }

    /// Whether a proof carrying `nonce` is fresh enough now.
    pub fn accepts(&self, nonce: Option<&str>) -> bool {
        self.accepts_at(nonce, Instant::now())
    }

    fn current_at(&self, now: Instant) -> String {
        let mut state = lock(&self.state);
        state.rotate(now);
        state.current.clone()
    }

    fn accepts_at(&self, nonce: Option<&str>, now: Instant) -> bool {
        let mut state = lock(&self.state);
        state.rotate(now);
        nonce.is_some_and(|n| n == state.current || Some(n) == state.previous.as_deref())
    }
}

impl NonceState {
    /// Replaces the current nonce once it has lived [`NONCE_LIFETIME`] (a failing random
    /// source keeps the old one, still unpredictable, rather than stopping the server).
    fn rotate(&mut self, now: Instant) {
        let age = now.saturating_duration_since(self.issued);
        if age < NONCE_LIFETIME {
            return;
        }
        let Ok(fresh) = random_token() else {
            tracing::warn!("no fresh DPoP nonce could be made; the current one is kept");
            return;
        };
        let previous = std::mem::replace(&mut self.current, fresh);
        self.previous = (age < NONCE_LIFETIME * 2).then_some(previous);
        self.issued = now;
    }
}

#[cfg(all(test, feature = "http-client"))]
mod tests {
    use super::*;

    fn part(proof: &str, index: usize) -> serde_json::Value {
        let text = proof.split('.').nth(index).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(text).unwrap()).unwrap()
    }

    #[test]
    fn a_proof_names_the_request_and_verifies_with_its_jwk() {
        let key = DpopKey::generate().unwrap();
        let url = Url::parse("https://mcp.example.com/mcp?q=1#f").unwrap();
        let proof = key.proof("POST", &url, Some("AT"), Some("n-1")).unwrap();
        let header = part(&proof, 0);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none(), "no private part");
        let claims = part(&proof, 1);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example.com/mcp");
        assert_eq!(claims["ath"], ath("AT"));
        assert_eq!(claims["nonce"], "n-1");
        assert!(claims["iat"].is_u64() && claims["jti"].is_string());

        let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(header["jwk"].clone()).unwrap();
        let decoding = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        jsonwebtoken::decode::<serde_json::Value>(&proof, &decoding, &validation).unwrap();

        let again = key.proof("POST", &url, Some("AT"), None).unwrap();
        assert_ne!(
            part(&again, 1)["jti"],
            claims["jti"],
            "a fresh jti each time"
        );
    }

    #[test]
    fn the_thumbprint_follows_rfc_7638() {
        // RFC 7638 §3.1 hashes the members in lexicographic order, without whitespace.
        let key = DpopKey::generate().unwrap();
        let jwk = key.jwk();
        let text = format!(
            r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#,
            jwk["x"].as_str().unwrap(),
            jwk["y"].as_str().unwrap()
        );
        assert_eq!(
            key.thumbprint(),
            URL_SAFE_NO_PAD.encode(Sha256::digest(text.as_bytes()))
        );
    }

    #[test]
    fn a_key_survives_the_store_and_hides_in_debug_output() {
        let key = DpopKey::generate().unwrap();
        let text = serde_json::to_string(&key).unwrap();
        let back: DpopKey = serde_json::from_str(&text).unwrap();
        assert_eq!(back.thumbprint(), key.thumbprint());
        assert!(!format!("{key:?}").contains(text.trim_matches('"')));
        assert!(serde_json::from_str::<DpopKey>("\"bm90IGEga2V5\"").is_err());
    }

    #[test]
    fn a_server_nonce_is_accepted_until_the_one_after_the_next() {
        let nonces = ServerNonces::new().unwrap();
        let start = lock(&nonces.state).issued;
        let first = nonces.current_at(start);
        assert!(nonces.accepts_at(Some(&first), start));
        assert!(!nonces.accepts_at(None, start));
        assert!(!nonces.accepts_at(Some("made-up"), start));

        let later = start + NONCE_LIFETIME;
        let second = nonces.current_at(later);
        assert_ne!(second, first, "rotated");
        assert!(nonces.accepts_at(Some(&second), later));
        assert!(
            nonces.accepts_at(Some(&first), later),
            "the previous one still passes"
        );

        let third = nonces.current_at(later + NONCE_LIFETIME);
        assert_ne!(third, second);
        assert!(!nonces.accepts_at(Some(&first), later + NONCE_LIFETIME));
        assert!(nonces.accepts_at(Some(&second), later + NONCE_LIFETIME));

        // Unused for two lifetimes: the old nonce is not kept as the previous one.
        let much_later = later + NONCE_LIFETIME * 4;
        assert!(!nonces.accepts_at(Some(&third), much_later));
    }

    #[test]
    fn nonces_are_kept_per_origin() {
        let nonces = Nonces::default();
        let a = Url::parse("http://127.0.0.1:1/mcp").unwrap();
        let b = Url::parse("http://127.0.0.1:2/token").unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(NONCE_HEADER, "n1".parse().unwrap());
        assert!(nonces.observe(&a, &headers));
        assert!(!nonces.observe(&a, &headers), "the same nonce is not new");
        assert_eq!(nonces.get(&a).as_deref(), Some("n1"));
        assert_eq!(nonces.get(&b), None);
    }
}
