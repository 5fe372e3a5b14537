//! RSA-OAEP encryption (`rsa-oaep-sha256`: SHA-256 and MGF1-SHA-256, no label) for small
//! secrets such as a content key.

use openssl::pkey_ctx::PkeyCtx;
use openssl::rsa::Padding;

use super::kind::KeyKind;
use super::{PrivateKey, PublicKey};
use crate::error::{Error, Result};
use crate::hash::HashAlg;

/// The catalogue name of the only encryption scheme offered.
pub const RSA_OAEP: &str = "rsa-oaep-sha256";

/// Bytes of OAEP overhead with SHA-256 (RFC 8017 §7.1.1: 2·hLen + 2).
const OAEP_SHA256_OVERHEAD: usize = 2 * 32 + 2;

impl PublicKey {
    /// `plaintext` encrypted with RSA-OAEP (SHA-256); at most modulus bytes − 66 long.
    pub fn encrypt_oaep(&self, plaintext: &[u8]) -> Result<Vec<u8>> {
        let KeyKind::Rsa(bits) = self.kind() else {
            return Err(wrong_key(self.kind()));
        };
        let max = (bits as usize).div_ceil(8) - OAEP_SHA256_OVERHEAD;
        if plaintext.len() > max {
            return Err(Error::InvalidLength {
                what: "RSA-OAEP plaintext",
                expected: format!("at most {max}"),
                got: plaintext.len(),
            });
        }
        let mut ctx = PkeyCtx::new(&self.pkey)?;
        ctx.encrypt_init()?;
        ctx.set_rsa_padding(Padding::PKCS1_OAEP)?;
        ctx.set_rsa_oaep_md(HashAlg::Sha256.md())?;
        ctx.set_rsa_mgf1_md(HashAlg::Sha256.md())?;
        let mut out = Vec::new();
        ctx.encrypt_to_vec(plaintext, &mut out)?;
        Ok(out)
    }
}

impl PrivateKey {
    /// The plaintext of an RSA-OAEP (SHA-256) `ciphertext`; [`Error::DecryptFailed`] if it
    /// was altered or made for another key.
    pub fn decrypt_oaep(&self, ciphertext: &[u8]) -> Result<Vec<u8>> {
        if !matches!(self.kind(), KeyKind::Rsa(_)) {
            return Err(wrong_key(self.kind()));
        }
        let mut ctx = PkeyCtx::new(&self.pkey)?;
        ctx.decrypt_init()?;
        ctx.set_rsa_padding(Padding::PKCS1_OAEP)?;
        ctx.set_rsa_oaep_md(HashAlg::Sha256.md())?;
        ctx.set_rsa_mgf1_md(HashAlg::Sha256.md())?;
        let mut out = Vec::new();
        ctx.decrypt_to_vec(ciphertext, &mut out)
            .map_err(|_| Error::DecryptFailed)?;
        Ok(out)
    }
}

fn wrong_key(kind: KeyKind) -> Error {
    Error::WrongKey {
        alg: RSA_OAEP,
        key: kind.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_tamper_and_limits() {
        let key = PrivateKey::generate("rsa-2048").unwrap();
        let public = key.public_key().unwrap();
        let mut sealed = public.encrypt_oaep(b"content key").unwrap();
        assert_eq!(key.decrypt_oaep(&sealed).unwrap(), b"content key");
        sealed[10] ^= 1;
        assert!(matches!(
            key.decrypt_oaep(&sealed),
            Err(Error::DecryptFailed)
        ));
        assert!(public.encrypt_oaep(&[0; 190]).is_ok());
        assert!(matches!(
            public.encrypt_oaep(&[0; 191]),
            Err(Error::InvalidLength { .. })
        ));
        let ec = PrivateKey::generate("ecdsa-p256").unwrap();
        assert!(matches!(
            ec.public_key().unwrap().encrypt_oaep(b"x"),
            Err(Error::WrongKey { .. })
        ));
    }
}
