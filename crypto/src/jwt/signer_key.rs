//! [`SignerKey`]: a JWT signing key whose private half stays with a [`Signer`] (an HSM key).

use std::fmt;

use super::key::jws_signature;
use super::{JwsSigner, JwtAlg};
use crate::error::Result;
use crate::keys::{SignAlg, Signer};

/// Signs tokens with `alg` through a [`Signer`]; pass it to [`sign_with`](super::sign_with).
pub struct SignerKey<'s> {
    signer: &'s dyn Signer,
    alg: SignAlg,
    kid: Option<String>,
}

impl<'s> SignerKey<'s> {
    /// A key pinned to `alg`; [`Error::WrongKey`](crate::Error::WrongKey) if the signer's
    /// key does not fit it.
    pub fn new(signer: &'s dyn Signer, alg: SignAlg) -> Result<Self> {
        alg.check_key(signer.public_key()?.kind())?;
        Ok(SignerKey {
            signer,
            alg,
            kid: None,
        })
    }

    /// The same key with key id `kid`, written into each token's header.
    pub fn with_kid(mut self, kid: &str) -> Self {
        self.kid = Some(kid.to_owned());
        self
    }
}

impl JwsSigner for SignerKey<'_> {
    fn jws_alg(&self) -> JwtAlg {
        JwtAlg::Signature(self.alg)
    }

    fn jws_kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    fn jws_sign(&self, input: &[u8]) -> Result<Vec<u8>> {
        jws_signature(self.signer, self.alg, input)
    }
}

impl fmt::Debug for SignerKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignerKey")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}
