//! [`Signer`]: whatever signs with a private key, in memory ([`PrivateKey`]) or on a hardware
//! token (`HsmKey`), so certificates, CSRs and tokens can be signed by either.

use super::{KeyKind, PrivateKey, PublicKey, SignAlg};
use crate::error::Result;

/// Signs with a private key that may never be in memory.
pub trait Signer {
    /// The matching public key.
    fn public_key(&self) -> Result<PublicKey>;
    /// The `alg` signature of `data` (ECDSA: DER, as [`PrivateKey::sign`] returns it).
    fn sign(&self, alg: SignAlg, data: &[u8]) -> Result<Vec<u8>>;
}

impl Signer for PrivateKey {
    fn public_key(&self) -> Result<PublicKey> {
        PrivateKey::public_key(self)
    }

    fn sign(&self, alg: SignAlg, data: &[u8]) -> Result<Vec<u8>> {
        PrivateKey::sign(self, alg, data)
    }
}

impl SignAlg {
    /// The algorithm X.509 objects (certificates, CSRs, CRLs) are signed with by a `kind`
    /// key: SHA-256 (SHA-384 on P-384) with PKCS#1 v1.5 or ECDSA, or Ed25519.
    pub(crate) fn for_x509(kind: KeyKind) -> Result<Self> {
        match kind {
            KeyKind::Rsa(_) => Ok(SignAlg::Rs256),
            KeyKind::EcdsaP256 => Ok(SignAlg::Es256),
            KeyKind::EcdsaP384 => Ok(SignAlg::Es384),
            KeyKind::Ed25519 => Ok(SignAlg::EdDsa),
            KeyKind::X25519 => Err(crate::Error::WrongKey {
                alg: "X.509 signing",
                key: kind.to_string(),
            }),
        }
    }
}
