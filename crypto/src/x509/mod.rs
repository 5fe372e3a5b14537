//! X.509: [`Certificate`] (read, fields, readable print), [`CertBuilder`] (self-signed and
//! CA-signed, with [`Usage`]s and safe defaults), [`Csr`] (PKCS#10) and CRLs ([`CrlBuilder`],
//! [`Crl`]). Chains are validated by [`Pki`](crate::pki::Pki).
//!
//! ```
//! use moria_crypto::keys::PrivateKey;
//! use moria_crypto::x509::{CertBuilder, Csr, Usage};
//!
//! let ca_key = PrivateKey::generate("ecdsa-p384")?;
//! let ca = CertBuilder::new("Moria Root CA")
//!     .usage(Usage::Ca { path_len: None })
//!     .self_signed(&ca_key)?;
//! let server_key = PrivateKey::generate("ecdsa-p256")?;
//! let csr = Csr::new("api.moria.test", &["api.moria.test"], &server_key)?;
//! let cert = CertBuilder::from_csr(&csr)?
//!     .hosts(&["api.moria.test"])
//!     .issue(&ca, &ca_key)?;
//! assert!(cert.is_signed_by(&ca)?);
//! # Ok::<(), moria_crypto::Error>(())
//! ```

mod builder;
mod cert;
mod crl;
mod csr;
mod der;
pub(crate) mod name;
mod time;

pub use builder::{CertBuilder, Usage, CLOCK_SKEW, DEFAULT_VALIDITY};
pub use cert::Certificate;
pub use crl::{Crl, CrlBuilder, DEFAULT_CRL_VALIDITY};
pub use csr::Csr;

/// A parse failure of `what`, with OpenSSL's reason.
fn invalid(what: &'static str, e: openssl::error::ErrorStack) -> crate::Error {
    crate::Error::InvalidInput {
        what,
        reason: e.to_string(),
    }
}
