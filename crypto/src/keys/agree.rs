//! Key agreement: ECDH on P-256/P-384 or X25519, always followed by HKDF, so the raw shared
//! secret never reaches the caller.

use openssl::derive::Deriver;

use super::kind::KeyKind;
use super::{PrivateKey, PublicKey};
use crate::error::{Error, Result};
use crate::kdf::hkdf;

/// The catalogue name of key agreement.
const ECDH: &str = "ecdh";

impl PrivateKey {
    /// Fills `out` with `hkdf_name` (`hkdf-sha256`) of the ECDH/X25519 secret shared with
    /// `peer`, with `salt` and `info`. Both keys must be of the same type (P-256, P-384 or
    /// X25519).
    pub fn agree(
        &self,
        peer: &PublicKey,
        hkdf_name: &str,
        salt: &[u8],
        info: &[u8],
        out: &mut [u8],
    ) -> Result<()> {
        let kind = self.kind();
        if !matches!(
            kind,
            KeyKind::EcdsaP256 | KeyKind::EcdsaP384 | KeyKind::X25519
        ) {
            return Err(Error::WrongKey {
                alg: ECDH,
                key: kind.to_string(),
            });
        }
        if peer.kind() != kind {
            return Err(Error::WrongKey {
                alg: ECDH,
                key: format!("{} peer for a {kind}", peer.kind()),
            });
        }
        let mut deriver = Deriver::new(&self.pkey)?;
        deriver.set_peer(&peer.pkey)?;
        let shared = deriver.derive_to_vec()?;
        hkdf(hkdf_name, &shared, salt, info, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_derive_the_same_key() {
        for name in ["ecdsa-p256", "ecdsa-p384", "x25519"] {
            let a = PrivateKey::generate(name).unwrap();
            let b = PrivateKey::generate(name).unwrap();
            let (mut ka, mut kb) = ([0u8; 32], [0u8; 32]);
            a.agree(&b.public_key().unwrap(), "hkdf-sha256", b"s", b"i", &mut ka)
                .unwrap();
            b.agree(&a.public_key().unwrap(), "hkdf-sha256", b"s", b"i", &mut kb)
                .unwrap();
            assert_eq!(ka, kb, "{name}");
        }
    }

    #[test]
    fn mismatched_keys_are_refused() {
        let p256 = PrivateKey::generate("ecdsa-p256").unwrap();
        let x = PrivateKey::generate("x25519").unwrap();
        let ed = PrivateKey::generate("ed25519").unwrap();
        let mut out = [0u8; 32];
        assert!(matches!(
            p256.agree(&x.public_key().unwrap(), "hkdf-sha256", b"", b"", &mut out),
            Err(Error::WrongKey { .. })
        ));
        assert!(matches!(
            ed.agree(&ed.public_key().unwrap(), "hkdf-sha256", b"", b"", &mut out),
            Err(Error::WrongKey { .. })
        ));
    }
}
