//! Signatures by JWS name: `RS256/384/512` (RSA PKCS#1 v1.5), `PS256/384/512` (RSA-PSS,
//! salt = digest length, MGF1 with the same hash), `ES256/384` (ECDSA, DER signatures as
//! OpenSSL writes them), `EdDSA` (Ed25519).

use std::fmt;

use super::kind::KeyKind;
use crate::error::{Error, Result};
use crate::hash::HashAlg;
use crate::lookup::lookup;

/// A signature algorithm of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SignAlg {
    /// RSA PKCS#1 v1.5 with SHA-256.
    Rs256,
    /// RSA PKCS#1 v1.5 with SHA-384.
    Rs384,
    /// RSA PKCS#1 v1.5 with SHA-512.
    Rs512,
    /// RSA-PSS with SHA-256.
    Ps256,
    /// RSA-PSS with SHA-384.
    Ps384,
    /// RSA-PSS with SHA-512.
    Ps512,
    /// ECDSA on P-256 with SHA-256.
    Es256,
    /// ECDSA on P-384 with SHA-384.
    Es384,
    /// Ed25519.
    EdDsa,
}

const TABLE: [(&str, SignAlg); 9] = [
    ("RS256", SignAlg::Rs256),
    ("RS384", SignAlg::Rs384),
    ("RS512", SignAlg::Rs512),
    ("PS256", SignAlg::Ps256),
    ("PS384", SignAlg::Ps384),
    ("PS512", SignAlg::Ps512),
    ("ES256", SignAlg::Es256),
    ("ES384", SignAlg::Es384),
    ("EdDSA", SignAlg::EdDsa),
];

impl SignAlg {
    /// Every signature algorithm of the catalogue.
    pub const ALL: [SignAlg; 9] = [
        SignAlg::Rs256,
        SignAlg::Rs384,
        SignAlg::Rs512,
        SignAlg::Ps256,
        SignAlg::Ps384,
        SignAlg::Ps512,
        SignAlg::Es256,
        SignAlg::Es384,
        SignAlg::EdDsa,
    ];

    /// The algorithm called `name` (JWS names, ASCII case-insensitive).
    pub fn from_name(name: &str) -> Result<Self> {
        lookup("signature", &TABLE, name)
    }

    /// The JWS name (`RS256`, `EdDSA`).
    pub fn name(self) -> &'static str {
        TABLE[self as usize].0
    }

    /// The hash signed over, `None` for EdDSA (which hashes internally).
    pub fn hash(self) -> Option<HashAlg> {
        match self {
            SignAlg::Rs256 | SignAlg::Ps256 | SignAlg::Es256 => Some(HashAlg::Sha256),
            SignAlg::Rs384 | SignAlg::Ps384 | SignAlg::Es384 => Some(HashAlg::Sha384),
            SignAlg::Rs512 | SignAlg::Ps512 => Some(HashAlg::Sha512),
            SignAlg::EdDsa => None,
        }
    }

    /// Whether a key of type `kind` can be used with this algorithm (ES256 needs P-256,
    /// ES384 P-384).
    pub fn accepts(self, kind: KeyKind) -> bool {
        match self {
            SignAlg::Rs256
            | SignAlg::Rs384
            | SignAlg::Rs512
            | SignAlg::Ps256
            | SignAlg::Ps384
            | SignAlg::Ps512 => matches!(kind, KeyKind::Rsa(_)),
            SignAlg::Es256 => kind == KeyKind::EcdsaP256,
            SignAlg::Es384 => kind == KeyKind::EcdsaP384,
            SignAlg::EdDsa => kind == KeyKind::Ed25519,
        }
    }

    /// Errors with [`Error::WrongKey`] unless a `kind` key fits this algorithm.
    pub(crate) fn check_key(self, kind: KeyKind) -> Result<()> {
        if self.accepts(kind) {
            Ok(())
        } else {
            Err(Error::WrongKey {
                alg: self.name(),
                key: kind.to_string(),
            })
        }
    }
}

impl fmt::Display for SignAlg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::PrivateKey;

    #[test]
    fn every_algorithm_signs_and_verifies_with_its_key() {
        let rsa = PrivateKey::generate("rsa-2048").unwrap();
        let p256 = PrivateKey::generate("ecdsa-p256").unwrap();
        let p384 = PrivateKey::generate("ecdsa-p384").unwrap();
        let ed = PrivateKey::generate("ed25519").unwrap();
        for alg in SignAlg::ALL {
            assert_eq!(SignAlg::from_name(alg.name()).unwrap(), alg);
            let key = [&rsa, &p256, &p384, &ed]
                .into_iter()
                .find(|k| alg.accepts(k.kind()))
                .unwrap();
            let public = key.public_key().unwrap();
            let sig = key.sign(alg, b"message").unwrap();
            public.verify(alg, b"message", &sig).unwrap();
            assert!(matches!(
                public.verify(alg, b"massage", &sig),
                Err(Error::BadSignature)
            ));
            assert!(matches!(
                public.verify(alg, b"message", &sig[..sig.len() - 1]),
                Err(Error::BadSignature)
            ));
        }
    }

    #[test]
    fn wrong_key_is_its_own_error() {
        let p256 = PrivateKey::generate("ecdsa-p256").unwrap();
        assert!(matches!(
            p256.sign(SignAlg::Rs256, b"x"),
            Err(Error::WrongKey { alg: "RS256", .. })
        ));
        assert!(matches!(
            p256.sign(SignAlg::Es384, b"x"),
            Err(Error::WrongKey { .. })
        ));
        let x = PrivateKey::generate("x25519").unwrap();
        assert!(matches!(
            x.public_key()
                .unwrap()
                .verify(SignAlg::EdDsa, b"x", &[0; 64]),
            Err(Error::WrongKey { .. })
        ));
    }
}
