//! Asymmetric keys and what they do, by name: key types ([`KeyKind`]: `rsa-2048/3072/4096`,
//! `ecdsa-p256/p384`, `ed25519`, `x25519`), signatures ([`SignAlg`]: `RS*`, `PS*`, `ES*`,
//! `EdDSA`), RSA-OAEP encryption and ECDH/X25519 agreement through HKDF.
//!
//! ```
//! use moria_crypto::keys::{PrivateKey, SignAlg};
//!
//! let key = PrivateKey::generate("ecdsa-p256")?;
//! let signature = key.sign(SignAlg::Es256, b"payload")?;
//! let public = key.public_key()?; // hand out public.to_pem()
//! public.verify(SignAlg::Es256, b"payload", &signature)?;
//! # Ok::<(), moria_crypto::Error>(())
//! ```

mod agree;
mod context;
pub(crate) mod ecdsa_sig;
mod kind;
mod oaep;
mod private;
mod public;
mod sign;
mod signer;

pub use context::{SignContext, VerifyContext};
pub use kind::{KeyKind, MAX_RSA_BITS, MIN_RSA_BITS};
pub use oaep::RSA_OAEP;
pub use private::PrivateKey;
pub use public::PublicKey;
pub use sign::SignAlg;
pub use signer::Signer;

use crate::error::Error;

/// A parse failure of key material, with OpenSSL's reason.
fn malformed(what: &str, e: openssl::error::ErrorStack) -> Error {
    Error::MalformedKey(format!("{what}: {e}"))
}
