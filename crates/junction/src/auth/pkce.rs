//! PKCE (RFC 7636) with `S256`, and the random `state` of an authorization request.
//!
//! The verifier is 32 bytes from the OS's CSPRNG, base64url without padding (43
//! characters); the challenge is `BASE64URL(SHA-256(verifier))`.
//!
//! ```
//! use junction::auth::Pkce;
//!
//! let pkce = Pkce::new().unwrap();
//! assert_eq!(pkce.verifier.len(), 43);
//! assert_eq!(pkce.challenge, junction::auth::pkce::s256(&pkce.verifier));
//! ```

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};

use super::AuthError;

/// A PKCE verifier and its `S256` challenge.
#[derive(Debug, Clone)]
pub struct Pkce {
    /// Sent with the token request.
    pub verifier: String,
    /// Sent with the authorization request (`code_challenge_method=S256`).
    pub challenge: String,
}

impl Pkce {
    /// A fresh verifier and its challenge.
    pub fn new() -> Result<Pkce, AuthError> {
        let verifier = random_token()?;
        let challenge = s256(&verifier);
        Ok(Pkce {
            verifier,
            challenge,
        })
    }
}

/// `BASE64URL(SHA-256(verifier))`, the `S256` transformation.
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// 256 random bits, base64url: a PKCE verifier or an unguessable `state`.
pub fn random_token() -> Result<String, AuthError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| AuthError::Random(e.to_string()))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_matches_the_rfc_7636_example() {
        // RFC 7636 Appendix B.
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_fresh_and_of_legal_length() {
        let a = Pkce::new().unwrap();
        let b = Pkce::new().unwrap();
        assert_ne!(a.verifier, b.verifier);
        assert!((43..=128).contains(&a.verifier.len()));
    }
}
