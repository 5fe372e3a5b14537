//! JSON Web Tokens (RFC 7519) signed with HS256 or any [`SignAlg`](crate::keys::SignAlg)
//! (RFC 7518, RFC 8037): [`JwtKey::sign`] and [`JwtKey::verify`], which checks the
//! signature with the key's one pinned algorithm, then `exp`/`nbf`/`iss`/`aud` per
//! [`Validation`]. [`Jwks`] verifies tokens of an OpenID Connect provider by `kid`.
//!
//! ```
//! use moria_crypto::jwt::{JwtKey, Validation};
//! use moria_crypto::keys::{PrivateKey, SignAlg};
//!
//! let key = JwtKey::signing(SignAlg::EdDsa, PrivateKey::generate("ed25519")?)?;
//! let token = key.sign(&serde_json::json!({"sub": "gimli", "exp": 4_000_000_000u64}))?;
//! let verifier = JwtKey::verifying(SignAlg::EdDsa, key.public_key()?)?;
//! assert_eq!(verifier.verify(&token, &Validation::new())?["sub"], "gimli");
//! # Ok::<(), moria_crypto::Error>(())
//! ```

mod jwk;
mod jwks;
mod key;
mod signer_key;
mod validation;

pub use jwks::Jwks;
pub use key::{JwtAlg, JwtKey, MIN_HS256_SECRET_LEN};
pub use signer_key::SignerKey;
pub use validation::Validation;

use serde_json::{Map, Value};

use crate::encoding::{base64url, from_base64url};
use crate::error::{Error, Result};

/// The claims of a token: a JSON object.
pub type Claims = Map<String, Value>;

/// The largest token [`JwtKey::verify`] accepts, in bytes.
pub const MAX_TOKEN_LEN: usize = 64 * 1024;

/// Something that signs JWS input with one algorithm: a [`JwtKey`], or a key that never
/// leaves a hardware token.
pub trait JwsSigner {
    /// The algorithm written into the `alg` header.
    fn jws_alg(&self) -> JwtAlg;
    /// The key id written into the `kid` header, if any.
    fn jws_kid(&self) -> Option<&str>;
    /// The JWS signature of `input` (ECDSA: `r || s`).
    fn jws_sign(&self, input: &[u8]) -> Result<Vec<u8>>;
}

/// A compact JWS `header.payload.signature` over `claims` (a JSON object) by `signer`.
pub fn sign_with(signer: &dyn JwsSigner, claims: &Value) -> Result<String> {
    if !claims.is_object() {
        return Err(Error::TokenMalformed("claims must be a JSON object".into()));
    }
    let mut header = serde_json::json!({ "alg": signer.jws_alg().name(), "typ": "JWT" });
    if let Some(kid) = signer.jws_kid() {
        header["kid"] = Value::from(kid);
    }
    let mut token = base64url(header.to_string().as_bytes());
    token.push('.');
    token.push_str(&base64url(claims.to_string().as_bytes()));
    let signature = signer.jws_sign(token.as_bytes())?;
    token.push('.');
    token.push_str(&base64url(&signature));
    Ok(token)
}

impl JwtKey {
    /// A compact JWS `header.payload.signature` over `claims` (a JSON object).
    pub fn sign(&self, claims: &Value) -> Result<String> {
        sign_with(self, claims)
    }

    /// The claims of `token` if its signature verifies under this key and its claims pass
    /// `validation`; otherwise the reason.
    pub fn verify(&self, token: &str, validation: &Validation) -> Result<Claims> {
        self.verify_parts(&Parts::split(token)?, validation)
    }

    fn verify_parts(&self, parts: &Parts<'_>, validation: &Validation) -> Result<Claims> {
        let alg = parts
            .header
            .get("alg")
            .and_then(Value::as_str)
            .unwrap_or("");
        if alg != self.alg().name() {
            return Err(Error::TokenAlgorithm {
                expected: self.alg().name(),
                found: alg.to_owned(),
            });
        }
        if !self.verify_bytes(parts.signing_input.as_bytes(), &parts.signature)? {
            return Err(Error::TokenSignature);
        }
        let claims = decode_object("payload", parts.payload_b64)?;
        validation.check(&claims)?;
        Ok(claims)
    }
}

/// A token cut into its parts, the header decoded; the payload is decoded only after the
/// signature verifies.
struct Parts<'t> {
    header: Claims,
    payload_b64: &'t str,
    signing_input: &'t str,
    signature: Vec<u8>,
}

impl<'t> Parts<'t> {
    fn split(token: &'t str) -> Result<Self> {
        if token.len() > MAX_TOKEN_LEN {
            return Err(Error::TokenMalformed(format!(
                "longer than {MAX_TOKEN_LEN} bytes"
            )));
        }
        let mut parts = token.split('.');
        let (Some(header_b64), Some(payload_b64), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(Error::TokenMalformed(
                "expected three dot-separated parts".into(),
            ));
        };
        let header = decode_object("header", header_b64)?;
        let signature = from_base64url(signature)
            .ok_or_else(|| Error::TokenMalformed("signature is not base64url".into()))?;
        Ok(Parts {
            header,
            payload_b64,
            signing_input: &token[..header_b64.len() + 1 + payload_b64.len()],
            signature,
        })
    }
}

fn decode_object(what: &str, part: &str) -> Result<Claims> {
    let bytes = from_base64url(part)
        .ok_or_else(|| Error::TokenMalformed(format!("{what} is not base64url")))?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Error::TokenMalformed(format!(
            "{what} is not a JSON object"
        ))),
        Err(e) => Err(Error::TokenMalformed(format!("{what}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> JwtKey {
        JwtKey::hs256(&[7u8; 32]).unwrap()
    }

    #[test]
    fn sign_then_verify() {
        let token = key().sign(&json!({"sub": "alice", "exp": 2_000})).unwrap();
        let claims = key().verify(&token, &Validation::new().at(1_000)).unwrap();
        assert_eq!(claims["sub"], "alice");
    }

    #[test]
    fn malformed_tokens_have_reasons() {
        let v = Validation::new();
        for bad in [
            "",
            "a.b",
            "a.b.c.d",
            "!!.e30.AA",
            "e30.e30.AA",
            "bnVsbA.e30.AA",
        ] {
            assert!(
                matches!(
                    key().verify(bad, &v),
                    Err(Error::TokenMalformed(_) | Error::TokenAlgorithm { .. })
                ),
                "{bad:?}"
            );
        }
        assert!(matches!(
            key().sign(&json!([1, 2])),
            Err(Error::TokenMalformed(_))
        ));
        let long = "a".repeat(MAX_TOKEN_LEN + 1);
        assert!(matches!(
            key().verify(&long, &v),
            Err(Error::TokenMalformed(_))
        ));
    }

    #[test]
    fn tampered_payload_fails_signature() {
        let token = key().sign(&json!({"admin": false, "exp": 2_000})).unwrap();
        let mut parts: Vec<&str> = token.split('.').collect();
        let forged = base64url(br#"{"admin":true,"exp":2000}"#);
        parts[1] = &forged;
        let forged_token = parts.join(".");
        assert!(matches!(
            key().verify(&forged_token, &Validation::new().at(1_000)),
            Err(Error::TokenSignature)
        ));
    }

    #[test]
    fn alg_none_and_other_keys_are_rejected() {
        let header = base64url(br#"{"alg":"none"}"#);
        let payload = base64url(br#"{"exp":2000}"#);
        let unsigned = format!("{header}.{payload}.");
        assert!(matches!(
            key().verify(&unsigned, &Validation::new().at(1_000)),
            Err(Error::TokenAlgorithm { .. })
        ));
        let other = JwtKey::hs256(&[8u8; 32]).unwrap();
        let token = other.sign(&json!({"exp": 2_000})).unwrap();
        assert!(matches!(
            key().verify(&token, &Validation::new().at(1_000)),
            Err(Error::TokenSignature)
        ));
    }
}
