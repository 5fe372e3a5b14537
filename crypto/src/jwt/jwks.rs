//! [`Jwks`]: a JSON Web Key Set (RFC 7517 §5), such as an OpenID Connect provider's
//! `jwks_uri` document, used to verify tokens by their `kid` header.

use std::collections::HashMap;

use serde_json::Value;

use super::{jwk, Claims, JwtKey, Parts, Validation};
use crate::error::{Error, Result};

/// The largest JWKS document accepted, in bytes.
pub const MAX_JWKS_LEN: usize = 1024 * 1024;

/// Verifying keys by `kid`, each pinned to its algorithm.
#[derive(Clone, Debug, Default)]
pub struct Jwks {
    by_kid: HashMap<String, JwtKey>,
}

impl Jwks {
    /// The signature keys of a JWKS document (`{"keys": [...]}`). Keys marked
    /// `"use": "enc"` are skipped; a signature key without `kid`, of an unsupported type or
    /// with bad parameters is an error naming it.
    pub fn from_json(json: &[u8]) -> Result<Self> {
        if json.len() > MAX_JWKS_LEN {
            return Err(Error::InvalidLength {
                what: "JWKS document",
                expected: format!("at most {MAX_JWKS_LEN}"),
                got: json.len(),
            });
        }
        let doc: Value =
            serde_json::from_slice(json).map_err(|e| Error::MalformedKey(format!("JWKS: {e}")))?;
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::MalformedKey("JWKS: no \"keys\" array".into()))?;
        let mut by_kid = HashMap::new();
        for (i, entry) in keys.iter().enumerate() {
            let jwk = entry
                .as_object()
                .ok_or_else(|| Error::MalformedKey(format!("JWKS key {i}: not an object")))?;
            if jwk.get("use").and_then(Value::as_str) == Some("enc") {
                continue;
            }
            let key = jwk::parse(jwk).map_err(|e| match e {
                Error::MalformedKey(reason) => Error::MalformedKey(format!("key {i}: {reason}")),
                other => other,
            })?;
            let kid = key
                .kid()
                .ok_or_else(|| Error::MalformedKey(format!("JWKS key {i}: no \"kid\"")))?
                .to_owned();
            by_kid.insert(kid, key);
        }
        Ok(Jwks { by_kid })
    }

    /// Adds (or replaces) a key under its `kid`; a key without one is refused.
    pub fn insert(&mut self, key: JwtKey) -> Result<()> {
        let kid = key.kid().ok_or_else(|| Error::InvalidInput {
            what: "JWKS key",
            reason: "a key needs a kid".into(),
        })?;
        self.by_kid.insert(kid.to_owned(), key);
        Ok(())
    }

    /// The key with id `kid`.
    pub fn get(&self, kid: &str) -> Option<&JwtKey> {
        self.by_kid.get(kid)
    }

    /// How many keys the set holds.
    pub fn len(&self) -> usize {
        self.by_kid.len()
    }

    /// Whether the set holds no key.
    pub fn is_empty(&self) -> bool {
        self.by_kid.is_empty()
    }

    /// The claims of `token`, verified with the key its `kid` header names (which must also
    /// match the token's `alg`), then checked against `validation`.
    pub fn verify(&self, token: &str, validation: &Validation) -> Result<Claims> {
        let parts = Parts::split(token)?;
        let kid = parts
            .header
            .get("kid")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::TokenMalformed("no kid in the header".into()))?;
        let key = self
            .get(kid)
            .ok_or_else(|| Error::TokenMalformed(format!("unknown kid {kid:?}")))?;
        key.verify_parts(&parts, validation)
    }
}
