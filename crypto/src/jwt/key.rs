//! JWT signing keys: an HMAC secret (HS256) or a P-256 key pair (ES256).

use std::fmt;

use openssl::bn::BigNum;
use openssl::ec::{EcGroup, EcKey};
use openssl::ecdsa::EcdsaSig;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private, Public};

use crate::ct::constant_time_eq;
use crate::error::{Error, Result};
use crate::hash::{HashAlg, Hasher};
use crate::hmac::Hmac;

/// Smallest HS256 secret accepted: RFC 7518 §3.2 asks for at least the hash size.
pub const MIN_HS256_SECRET_LEN: usize = 32;
/// Size of one ES256 signature coordinate (r or s).
const ES256_COORD_LEN: usize = 32;

/// A JWS algorithm supported for tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JwtAlg {
    /// HMAC with SHA-256.
    Hs256,
    /// ECDSA on P-256 with SHA-256.
    Es256,
}

impl JwtAlg {
    /// The `alg` header value.
    pub fn name(self) -> &'static str {
        match self {
            JwtAlg::Hs256 => "HS256",
            JwtAlg::Es256 => "ES256",
        }
    }
}

enum Material {
    Hs256(Vec<u8>),
    Es256Private(EcKey<Private>),
    Es256Public(EcKey<Public>),
}

/// A key that signs and/or verifies tokens. An ES256 public key only verifies.
pub struct JwtKey {
    material: Material,
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
        Ok(JwtKey {
            material: Material::Hs256(secret.to_vec()),
        })
    }

    /// A fresh random ES256 key pair.
    pub fn es256_generate() -> Result<Self> {
        let group = p256()?;
        let key = EcKey::generate(&group)?;
        Ok(JwtKey {
            material: Material::Es256Private(key),
        })
    }

    /// An ES256 signing key from a PEM private key (SEC1 or PKCS#8) on P-256.
    pub fn es256_private_pem(pem: &[u8]) -> Result<Self> {
        let key = PKey::private_key_from_pem(pem)
            .and_then(|k| k.ec_key())
            .map_err(|e| invalid("ES256 private key", e))?;
        check_p256(key.group().curve_name())?;
        Ok(JwtKey {
            material: Material::Es256Private(key),
        })
    }

    /// An ES256 verifying key from a PEM public key (SubjectPublicKeyInfo) on P-256.
    pub fn es256_public_pem(pem: &[u8]) -> Result<Self> {
        let key = PKey::public_key_from_pem(pem)
            .and_then(|k| k.ec_key())
            .map_err(|e| invalid("ES256 public key", e))?;
        check_p256(key.group().curve_name())?;
        Ok(JwtKey {
            material: Material::Es256Public(key),
        })
    }

    /// The PEM public key of an ES256 key, to hand to verifiers.
    pub fn public_key_pem(&self) -> Result<Vec<u8>> {
        match &self.material {
            Material::Es256Private(key) => {
                let public = EcKey::from_public_key(key.group(), key.public_key())?;
                Ok(public.public_key_to_pem()?)
            }
            Material::Es256Public(key) => Ok(key.public_key_to_pem()?),
            Material::Hs256(_) => Err(Error::InvalidInput {
                what: "key",
                reason: "HS256 keys have no public part".into(),
            }),
        }
    }

    /// The algorithm this key signs and verifies with.
    pub fn alg(&self) -> JwtAlg {
        match self.material {
            Material::Hs256(_) => JwtAlg::Hs256,
            Material::Es256Private(_) | Material::Es256Public(_) => JwtAlg::Es256,
        }
    }

    /// The JWS signature of `input` (for ES256: r || s, 64 bytes).
    pub(crate) fn sign_bytes(&self, input: &[u8]) -> Result<Vec<u8>> {
        match &self.material {
            Material::Hs256(secret) => {
                let mut mac = Hmac::with_alg(HashAlg::Sha256, secret)?;
                mac.update(input)?;
                Ok(mac.finish()?.to_vec())
            }
            Material::Es256Private(key) => {
                let digest = Hasher::with_alg(HashAlg::Sha256)?.digest(input)?;
                let sig = EcdsaSig::sign(&digest, key)?;
                let mut out = sig.r().to_vec_padded(ES256_COORD_LEN as i32)?;
                out.extend(sig.s().to_vec_padded(ES256_COORD_LEN as i32)?);
                Ok(out)
            }
            Material::Es256Public(_) => Err(Error::InvalidInput {
                what: "key",
                reason: "an ES256 public key cannot sign".into(),
            }),
        }
    }

    /// Whether `signature` is a valid JWS signature of `input` under this key.
    pub(crate) fn verify_bytes(&self, input: &[u8], signature: &[u8]) -> Result<bool> {
        let ec_key = match &self.material {
            Material::Hs256(_) => {
                return Ok(constant_time_eq(&self.sign_bytes(input)?, signature));
            }
            Material::Es256Private(key) => EcKey::from_public_key(key.group(), key.public_key())?,
            Material::Es256Public(key) => key.clone(),
        };
        if signature.len() != 2 * ES256_COORD_LEN {
            return Ok(false);
        }
        let (r, s) = signature.split_at(ES256_COORD_LEN);
        let sig =
            EcdsaSig::from_private_components(BigNum::from_slice(r)?, BigNum::from_slice(s)?)?;
        let digest = Hasher::with_alg(HashAlg::Sha256)?.digest(input)?;
        Ok(sig.verify(&digest, &ec_key).unwrap_or(false))
    }
}

impl fmt::Debug for JwtKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtKey")
            .field("alg", &self.alg())
            .finish_non_exhaustive()
    }
}

fn p256() -> Result<EcGroup> {
    Ok(EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?)
}

fn check_p256(curve: Option<Nid>) -> Result<()> {
    if curve == Some(Nid::X9_62_PRIME256V1) {
        Ok(())
    } else {
        Err(Error::InvalidInput {
            what: "ES256 key",
            reason: "the curve must be P-256".into(),
        })
    }
}

fn invalid(what: &'static str, e: openssl::error::ErrorStack) -> Error {
    Error::InvalidInput {
        what,
        reason: e.to_string(),
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
        let sig = private.sign_bytes(b"input").unwrap();
        assert_eq!(sig.len(), 64);
        assert!(public.verify_bytes(b"input", &sig).unwrap());
        assert!(!public.verify_bytes(b"other", &sig).unwrap());
        assert!(!public.verify_bytes(b"input", &sig[..63]).unwrap());
        assert!(public.sign_bytes(b"input").is_err());
    }

    #[test]
    fn other_curves_are_rejected() {
        let group = EcGroup::from_curve_name(Nid::SECP384R1).unwrap();
        let pem = EcKey::generate(&group)
            .unwrap()
            .private_key_to_pem()
            .unwrap();
        assert!(matches!(
            JwtKey::es256_private_pem(&pem),
            Err(Error::InvalidInput { .. })
        ));
        assert!(matches!(
            JwtKey::es256_private_pem(b"not pem"),
            Err(Error::InvalidInput { .. })
        ));
    }
}
