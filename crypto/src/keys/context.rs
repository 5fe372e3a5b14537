//! Reusable signature contexts: [`SignContext`] and [`VerifyContext`] set one key and one
//! algorithm up once (as `openssl speed` does) and then sign or verify many messages.

use std::fmt;

use openssl::error::ErrorStack;
use openssl::md_ctx::MdCtx;
use openssl::pkey::{HasPublic, PKeyRef, Private};
use openssl::pkey_ctx::{PkeyCtx, PkeyCtxRef};
use openssl::rsa::Padding;
use openssl::sign::RsaPssSaltlen;

use super::{PrivateKey, PublicKey, SignAlg};
use crate::error::{Error, Result};
use crate::hash::{HashAlg, Hasher};

/// How one context works: hash here and sign the digest (RSA, ECDSA), or hand the whole
/// message to a one-shot digest-sign context (Ed25519).
enum Method<T> {
    Hashed { ctx: PkeyCtx<T>, hasher: Hasher },
    Whole(MdCtx),
}

/// Signs messages with one private key and algorithm. Not shared between threads: make one
/// per fiber or per use.
pub struct SignContext {
    alg: SignAlg,
    method: Method<Private>,
}

/// Verifies signatures with one public key and algorithm.
pub struct VerifyContext {
    alg: SignAlg,
    method: Method<openssl::pkey::Public>,
}

impl PrivateKey {
    /// A context that signs with this key and `alg`; [`Error::WrongKey`] if they do not fit.
    pub fn sign_context(&self, alg: SignAlg) -> Result<SignContext> {
        alg.check_key(self.kind())?;
        let method = match alg.hash() {
            Some(hash) => hashed(&self.pkey, alg, hash, |ctx| ctx.sign_init())?,
            None => {
                let mut md = MdCtx::new()?;
                md.digest_sign_init::<Private>(None, &self.pkey)?;
                Method::Whole(md)
            }
        };
        Ok(SignContext { alg, method })
    }

    /// The signature of `data` with `alg` (ECDSA: DER, as `openssl dgst -sign` writes it).
    pub fn sign(&self, alg: SignAlg, data: &[u8]) -> Result<Vec<u8>> {
        self.sign_context(alg)?.sign(data)
    }
}

impl PublicKey {
    /// A context that verifies with this key and `alg`; [`Error::WrongKey`] if they do not
    /// fit.
    pub fn verify_context(&self, alg: SignAlg) -> Result<VerifyContext> {
        Ok(VerifyContext {
            alg,
            method: verifying_method(&self.pkey, self, alg)?,
        })
    }

    /// `Ok` if `signature` is a valid `alg` signature of `data`, [`Error::BadSignature`] if
    /// not, [`Error::WrongKey`] if this key does not fit `alg`.
    pub fn verify(&self, alg: SignAlg, data: &[u8], signature: &[u8]) -> Result<()> {
        self.verify_context(alg)?.verify(data, signature)
    }
}

/// The method of a context verifying with `key` (its OpenSSL key `pkey`) and `alg`.
fn verifying_method(
    pkey: &PKeyRef<openssl::pkey::Public>,
    key: &PublicKey,
    alg: SignAlg,
) -> Result<Method<openssl::pkey::Public>> {
    alg.check_key(key.kind())?;
    Ok(match alg.hash() {
        Some(hash) => hashed(pkey, alg, hash, |ctx| ctx.verify_init())?,
        None => {
            let mut md = MdCtx::new()?;
            md.digest_verify_init(None, pkey)?;
            Method::Whole(md)
        }
    })
}

impl SignContext {
    /// The signature of `data`.
    pub fn sign(&mut self, data: &[u8]) -> Result<Vec<u8>> {
        let mut signature = Vec::new();
        match &mut self.method {
            Method::Hashed { ctx, hasher } => {
                ctx.sign_to_vec(&hasher.digest(data)?, &mut signature)?;
            }
            Method::Whole(md) => {
                md.digest_sign_to_vec(data, &mut signature)?;
            }
        }
        Ok(signature)
    }

    /// The algorithm this context signs with.
    pub fn alg(&self) -> SignAlg {
        self.alg
    }
}

impl VerifyContext {
    /// `Ok` if `signature` is a valid signature of `data`, else [`Error::BadSignature`].
    pub fn verify(&mut self, data: &[u8], signature: &[u8]) -> Result<()> {
        // A malformed signature makes OpenSSL report an error rather than `false`: both
        // mean "does not verify" (the openssl crate drains the error queue either way).
        let verdict = match &mut self.method {
            Method::Hashed { ctx, hasher } => ctx.verify(&hasher.digest(data)?, signature),
            Method::Whole(md) => md.digest_verify(data, signature),
        };
        match verdict {
            Ok(true) => Ok(()),
            Ok(false) | Err(_) => Err(Error::BadSignature),
        }
    }

    /// The algorithm this context verifies.
    pub fn alg(&self) -> SignAlg {
        self.alg
    }
}

/// A context for `pkey` that `init` readies for signing or verifying `alg` digests.
fn hashed<T: HasPublic>(
    pkey: &PKeyRef<T>,
    alg: SignAlg,
    hash: HashAlg,
    init: impl FnOnce(&mut PkeyCtxRef<T>) -> std::result::Result<(), ErrorStack>,
) -> Result<Method<T>> {
    let mut ctx = PkeyCtx::new(pkey)?;
    init(&mut ctx)?;
    configure(&mut ctx, alg, hash)?;
    Ok(Method::Hashed {
        ctx,
        hasher: Hasher::with_alg(hash)?,
    })
}

/// The digest to sign and, for RSA-PSS, the padding (salt = digest length, MGF1 with the
/// same hash).
fn configure<T: HasPublic>(ctx: &mut PkeyCtxRef<T>, alg: SignAlg, hash: HashAlg) -> Result<()> {
    ctx.set_signature_md(hash.md())?;
    match alg {
        SignAlg::Ps256 | SignAlg::Ps384 | SignAlg::Ps512 => {
            ctx.set_rsa_padding(Padding::PKCS1_PSS)?;
            ctx.set_rsa_pss_saltlen(RsaPssSaltlen::DIGEST_LENGTH)?;
            ctx.set_rsa_mgf1_md(hash.md())?;
        }
        SignAlg::Rs256 | SignAlg::Rs384 | SignAlg::Rs512 => {
            ctx.set_rsa_padding(Padding::PKCS1)?;
        }
        SignAlg::Es256 | SignAlg::Es384 | SignAlg::EdDsa => {}
    }
    Ok(())
}

impl fmt::Debug for SignContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignContext")
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for VerifyContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VerifyContext")
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_are_reusable() {
        for (name, alg) in [
            ("ed25519", SignAlg::EdDsa),
            ("ecdsa-p256", SignAlg::Es256),
            ("rsa-2048", SignAlg::Ps256),
        ] {
            let key = PrivateKey::generate(name).unwrap();
            let mut signer = key.sign_context(alg).unwrap();
            let mut verifier = key.public_key().unwrap().verify_context(alg).unwrap();
            for msg in [&b"one"[..], b"two", b"three"] {
                let sig = signer.sign(msg).unwrap();
                verifier.verify(msg, &sig).unwrap();
                assert!(matches!(
                    verifier.verify(b"four", &sig),
                    Err(Error::BadSignature)
                ));
            }
        }
    }
}
