//! [`HsmKey`]: a key pair on a PKCS#11 token; it signs and verifies on the token, and its
//! private half never leaves it.

use std::fmt;

use cryptoki::error::RvError;
use cryptoki::mechanism::rsa::{PkcsMgfType, PkcsPssParams};
use cryptoki::mechanism::{Mechanism, MechanismType};
use cryptoki::object::ObjectHandle;
use cryptoki::types::Ulong;

use super::{hsm_error, Hsm};
use crate::error::{Error, Result};
use crate::hash::hash;
use crate::keys::ecdsa_sig::{der_to_raw, raw_to_der};
use crate::keys::{KeyKind, PublicKey, SignAlg, Signer};

/// A key pair on a token, found by its label.
#[derive(Clone)]
pub struct HsmKey {
    pub(super) hsm: Hsm,
    pub(super) label: String,
    pub(super) private: ObjectHandle,
    pub(super) public_handle: ObjectHandle,
    pub(super) public: PublicKey,
}

impl HsmKey {
    /// The key's label on the token.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The key's type.
    pub fn kind(&self) -> KeyKind {
        self.public.kind()
    }

    /// `Ok` if `signature` is a valid `alg` signature of `data`, checked on the token;
    /// [`Error::BadSignature`] if not.
    pub fn verify(&self, alg: SignAlg, data: &[u8], signature: &[u8]) -> Result<()> {
        alg.check_key(self.kind())?;
        let (input, signature) = match coord_len(alg) {
            Some(len) => (digest(alg, data)?, der_to_raw(signature, len)?),
            None => (data.to_vec(), signature.to_vec()),
        };
        let handle = self.public_handle;
        let checked = self.hsm.call_raw(move |session| {
            session.verify(&mechanism(alg)?, handle, &input, &signature)
        })?;
        match checked {
            Ok(()) => Ok(()),
            Err(cryptoki::error::Error::Pkcs11(
                RvError::SignatureInvalid | RvError::SignatureLenRange,
                _,
            )) => Err(Error::BadSignature),
            Err(e) => Err(hsm_error(e)),
        }
    }
}

impl Signer for HsmKey {
    fn public_key(&self) -> Result<PublicKey> {
        Ok(self.public.clone())
    }

    /// Signs on the token: ECDSA over a SHA-2 digest made here (the result in DER),
    /// RSA PKCS#1 v1.5 and PSS with the token hashing.
    fn sign(&self, alg: SignAlg, data: &[u8]) -> Result<Vec<u8>> {
        alg.check_key(self.kind())?;
        let input = match coord_len(alg) {
            Some(_) => digest(alg, data)?,
            None => data.to_vec(),
        };
        let handle = self.private;
        let signature = self
            .hsm
            .call(move |session| session.sign(&mechanism(alg)?, handle, &input))?;
        match coord_len(alg) {
            Some(len) => raw_to_der(&signature, len),
            None => Ok(signature),
        }
    }
}

impl fmt::Debug for HsmKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HsmKey")
            .field("label", &self.label)
            .field("kind", &self.kind())
            .finish_non_exhaustive()
    }
}

/// ECDSA coordinate size for `alg`, `None` for RSA.
fn coord_len(alg: SignAlg) -> Option<usize> {
    match alg {
        SignAlg::Es256 => Some(32),
        SignAlg::Es384 => Some(48),
        _ => None,
    }
}

fn digest(alg: SignAlg, data: &[u8]) -> Result<Vec<u8>> {
    let hash_alg = alg.hash().ok_or_else(|| unsupported(alg))?;
    Ok(hash(hash_alg.name(), data)?.to_vec())
}

/// The PKCS#11 mechanism for `alg` (as a cryptoki result, for use inside a token call).
fn mechanism(alg: SignAlg) -> cryptoki::error::Result<Mechanism<'static>> {
    let pss = |hash_alg, mgf, len: u64| PkcsPssParams {
        hash_alg,
        mgf,
        s_len: Ulong::from(len),
    };
    Ok(match alg {
        SignAlg::Es256 | SignAlg::Es384 => Mechanism::Ecdsa,
        SignAlg::Rs256 => Mechanism::Sha256RsaPkcs,
        SignAlg::Rs384 => Mechanism::Sha384RsaPkcs,
        SignAlg::Rs512 => Mechanism::Sha512RsaPkcs,
        SignAlg::Ps256 => {
            Mechanism::Sha256RsaPkcsPss(pss(MechanismType::SHA256, PkcsMgfType::MGF1_SHA256, 32))
        }
        SignAlg::Ps384 => {
            Mechanism::Sha384RsaPkcsPss(pss(MechanismType::SHA384, PkcsMgfType::MGF1_SHA384, 48))
        }
        SignAlg::Ps512 => {
            Mechanism::Sha512RsaPkcsPss(pss(MechanismType::SHA512, PkcsMgfType::MGF1_SHA512, 64))
        }
        SignAlg::EdDsa => {
            return Err(cryptoki::error::Error::NotSupported);
        }
    })
}

fn unsupported(alg: SignAlg) -> Error {
    Error::Hsm(format!("{alg} is not offered for token keys"))
}
