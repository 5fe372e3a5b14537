//! JWT keys: an HMAC secret (HS256) or an asymmetric key pinned to one signature algorithm
//! (`RS*`, `PS*`, `ES*`, `EdDSA`).

use std::fmt;

use super::JwsSigner;
use crate::ct::constant_time_eq;
use crate::error::{Error, Result};
use crate::hash::HashAlg;
use crate::hmac::Hmac;
use crate::keys::ecdsa_sig::{der_to_raw, raw_to_der};
use crate::keys::{PrivateKey, PublicKey, SignAlg, Signer};

/// Smallest HS256 secret accepted: RFC 7518 §3.2 asks for at least the hash size.
pub const MIN_HS256_SECRET_LEN: usize = 32;

/// A JWS algorithm supported for tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JwtAlg {
    /// HMAC with SHA-256.
    Hs256,
    /// An asymmetric signature (`RS256`, `PS256`, `ES256`, `EdDSA`, ...).
    Signature(SignAlg),
}

impl JwtAlg {
    /// The `alg` header value.
    pub fn name(self) -> &'static str {
        match self {
            JwtAlg::Hs256 => "HS256",
            JwtAlg::Signature(alg) => alg.name(),
        }
    }
}

#[derive(Clone)]
enum Material {
    Hs256(Vec<u8>),
    Private(SignAlg, PrivateKey),
    Public(SignAlg, PublicKey),
}

/// A key that signs and/or verifies tokens with exactly one algorithm (a token naming
/// another `alg` is refused). A public key only verifies.
#[derive(Clone)]
pub struct JwtKey {
    material: Material,
    kid: Option<String>,
}

impl JwtKey {
    /// An HS256 key from a shared secret of at least [`MIN_HS256_SECRET_LEN`] bytes.
    pub fn hs256(secret: &[u8]) -> Result<Self> {
        if secret.len() < MIN_HS256_SECRET_LEN {
            return Err(Error::InvalidLength {
                what: "HS256 secret",
                expected: format!("at least {MIN_HS256_SECRET_LEN}"),
                got: secret.len(),
            });
        }
        Ok(Self::new(Material::Hs256(secret.to_vec())))
    }

    /// A signing key pinned to `alg`; [`Error::WrongKey`] if `key` does not fit it.
    pub fn signing(alg: SignAlg, key: PrivateKey) -> Result<Self> {
        alg.check_key(key.kind())?;
        Ok(Self::new(Material::Private(alg, key)))
    }

    /// A verifying key pinned to `alg`; [`Error::WrongKey`] if `key` does not fit it.
    pub fn verifying(alg: SignAlg, key: PublicKey) -> Result<Self> {
        alg.check_key(key.kind())?;
        Ok(Self::new(Material::Public(alg, key)))
    }

    /// A fresh random ES256 key pair.
    pub fn es256_generate() -> Result<Self> {
        Self::signing(SignAlg::Es256, PrivateKey::generate("ecdsa-p256")?)
    }

    /// An ES256 signing key from a PEM private key (SEC1 or PKCS#8) on P-256.
    pub fn es256_private_pem(pem: &[u8]) -> Result<Self> {
        Self::signing(SignAlg::Es256, PrivateKey::from_pem(pem)?)
    }

    /// An ES256 verifying key from a PEM public key (SubjectPublicKeyInfo) on P-256.
    pub fn es256_public_pem(pem: &[u8]) -> Result<Self> {
        Self::verifying(SignAlg::Es256, PublicKey::from_pem(pem)?)
    }

    /// The same key with key id `kid`, written into the header of the tokens it signs.
    pub fn with_kid(mut self, kid: &str) -> Self {
        self.kid = Some(kid.to_owned());
        self
    }

    /// The key id, if any.
    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// The public part of an asymmetric key, to hand to verifiers.
    pub fn public_key(&self) -> Result<PublicKey> {
        match &self.material {
            Material::Private(_, key) => key.public_key(),
            Material::Public(_, key) => Ok(key.clone()),
            Material::Hs256(_) => Err(Error::InvalidInput {
                what: "key",
                reason: "HS256 keys have no public part".into(),
            }),
        }
    }

    /// The PEM public key of an asymmetric key, to hand to verifiers.
    pub fn public_key_pem(&self) -> Result<Vec<u8>> {
        self.public_key()?.to_pem()
    }

    /// The algorithm this key signs and verifies with.
    pub fn alg(&self) -> JwtAlg {
        match &self.material {
            Material::Hs256(_) => JwtAlg::Hs256,
            Material::Private(alg, _) | Material::Public(alg, _) => JwtAlg::Signature(*alg),
        }
    }

    fn new(material: Material) -> Self {
        JwtKey {
            material,
            kid: None,
        }
    }

    /// Whether `signature` is a valid JWS signature of `input` under this key.
    pub(crate) fn verify_bytes(&self, input: &[u8], signature: &[u8]) -> Result<bool> {
        let (alg, public) = match &self.material {
            Material::Hs256(_) => {
                return Ok(constant_time_eq(&self.jws_sign(input)?, signature));
            }
            Material::Private(alg, key) => (*alg, key.public_key()?),
            Material::Public(alg, key) => (*alg, key.clone()),
        };
        let der;
        let signature = match ecdsa_coord_len(alg) {
            Some(len) => match raw_to_der(signature, len) {
                Ok(converted) => {
                    der = converted;
                    &der[..]
                }
                Err(_) => return Ok(false),
            },
            None => signature,
        };
        match public.verify(alg, input, signature) {
            Ok(()) => Ok(true),
            Err(Error::BadSignature) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

impl JwsSigner for JwtKey {
    fn jws_alg(&self) -> JwtAlg {
        self.alg()
    }

    fn jws_kid(&self) -> Option<&str> {
        self.kid()
    }

    fn jws_sign(&self, input: &[u8]) -> Result<Vec<u8>> {
        match &self.material {
            Material::Hs256(secret) => {
                let mut mac = Hmac::with_alg(HashAlg::Sha256, secret)?;
                mac.update(input)?;
                Ok(mac.finish()?.to_vec())
            }
            Material::Private(alg, key) => jws_signature(key, *alg, input),
            Material::Public(alg, _) => Err(Error::InvalidInput {
                what: "key",
                reason: format!("a {alg} public key cannot sign"),
            }),
        }
    }
}

/// The JWS signature of `input` by `signer` with `alg` (ECDSA converted to `r || s`).
pub(crate) fn jws_signature(signer: &dyn Signer, alg: SignAlg, input: &[u8]) -> Result<Vec<u8>> {
    let signature = signer.sign(alg, input)?;
    match ecdsa_coord_len(alg) {
        Some(len) => der_to_raw(&signature, len),
        None => Ok(signature),
    }
}

/// Size of one JWS ECDSA signature coordinate (RFC 7518 §3.4), `None` for other algorithms.
pub(crate) fn ecdsa_coord_len(alg: SignAlg) -> Option<usize> {
    match alg {
        SignAlg::Es256 => Some(32),
        SignAlg::Es384 => Some(48),
        _ => None,
    }
}

impl fmt::Debug for JwtKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtKey")
            .field("alg", &self.alg())
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_hs256_secret_is_rejected() {
        assert!(matches!(
            JwtKey::hs256(b"short"),
            Err(Error::InvalidLength { got: 5, .. })
        ));
    }

    #[test]
    fn es256_public_pem_verifies_what_private_signs() {
        let private = JwtKey::es256_generate().unwrap();
        let public = JwtKey::es256_public_pem(&private.public_key_pem().unwrap()).unwrap();
        let sig = private.jws_sign(b"input").unwrap();
        assert_eq!(sig.len(), 64);
        assert!(public.verify_bytes(b"input", &sig).unwrap());
        assert!(!public.verify_bytes(b"other", &sig).unwrap());
        assert!(!public.verify_bytes(b"input", &sig[..63]).unwrap());
        assert!(public.jws_sign(b"input").is_err());
    }

    #[test]
    fn keys_are_pinned_to_a_fitting_algorithm() {
        let p384 = PrivateKey::generate("ecdsa-p384").unwrap();
        assert!(matches!(
            JwtKey::es256_private_pem(&p384.to_pem().unwrap()),
            Err(Error::WrongKey { alg: "ES256", .. })
        ));
        assert!(matches!(
            JwtKey::signing(SignAlg::Rs256, p384.clone()),
            Err(Error::WrongKey { .. })
        ));
        let key = JwtKey::signing(SignAlg::Es384, p384).unwrap();
        assert_eq!(key.jws_sign(b"x").unwrap().len(), 96);
        assert!(matches!(
            JwtKey::es256_private_pem(b"not pem"),
            Err(Error::MalformedKey(_))
        ));
    }
}
