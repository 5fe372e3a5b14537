//! JSON Web Tokens (RFC 7519) signed with HS256 or ES256 (RFC 7518): [`JwtKey::sign`] and
//! [`JwtKey::verify`], which checks the signature, then `exp`/`nbf`/`iss`/`aud` per
//! [`Validation`].

mod key;
mod validation;

pub use key::{JwtAlg, JwtKey, MIN_HS256_SECRET_LEN};
pub use validation::Validation;

use serde_json::{Map, Value};

use crate::encoding::{base64url, from_base64url};
use crate::error::{Error, Result};

/// The claims of a token: a JSON object.
pub type Claims = Map<String, Value>;

/// The largest token [`JwtKey::verify`] accepts, in bytes.
pub const MAX_TOKEN_LEN: usize = 64 * 1024;

impl JwtKey {
    /// A compact JWS `header.payload.signature` over `claims` (a JSON object).
    pub fn sign(&self, claims: &Value) -> Result<String> {
        if !claims.is_object() {
            return Err(Error::TokenMalformed("claims must be a JSON object".into()));
        }
        let header = serde_json::json!({ "alg": self.alg().name(), "typ": "JWT" });
        let mut token = base64url(header.to_string().as_bytes());
        token.push('.');
        token.push_str(&base64url(claims.to_string().as_bytes()));
        let signature = self.sign_bytes(token.as_bytes())?;
        token.push('.');
        token.push_str(&base64url(&signature));
        Ok(token)
    }

    /// The claims of `token` if its signature verifies under this key and its claims pass
    /// `validation`; otherwise the reason.
    pub fn verify(&self, token: &str, validation: &Validation) -> Result<Claims> {
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
        let alg = header.get("alg").and_then(Value::as_str).unwrap_or("");
        if alg != self.alg().name() {
            return Err(Error::TokenAlgorithm {
                expected: self.alg().name(),
                found: alg.to_owned(),
            });
        }
        let signature = from_base64url(signature)
            .ok_or_else(|| Error::TokenMalformed("signature is not base64url".into()))?;
        let signing_input = &token[..header_b64.len() + 1 + payload_b64.len()];
        if !self.verify_bytes(signing_input.as_bytes(), &signature)? {
            return Err(Error::TokenSignature);
        }
        let claims = decode_object("payload", payload_b64)?;
        validation.check(&claims)?;
        Ok(claims)
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
