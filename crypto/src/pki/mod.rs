//! [`Pki`]: trusted roots, intermediates and CRLs, and `verify(cert, purpose)` by OpenSSL's
//! chain validation (X509_STORE: path building, depth, purpose, time, CRLs; RFC 5280 §6)
//! with a cache of successful verifications by certificate fingerprint.
//!
//! ```
//! use moria_crypto::keys::PrivateKey;
//! use moria_crypto::pki::{Pki, Purpose};
//! use moria_crypto::x509::{CertBuilder, Usage};
//!
//! let ca_key = PrivateKey::generate("ecdsa-p256")?;
//! let ca = CertBuilder::new("Root").usage(Usage::Ca { path_len: None }).self_signed(&ca_key)?;
//! let key = PrivateKey::generate("ecdsa-p256")?;
//! let client = CertBuilder::new("gimli")
//!     .usage(Usage::TlsClient)
//!     .public_key(key.public_key()?)
//!     .issue(&ca, &ca_key)?;
//! let pki = Pki::builder().add_root(&ca).build()?;
//! pki.verify(&client, Purpose::TlsClient)?;
//! assert!(pki.verify(&client, Purpose::TlsServer).is_err());
//! # Ok::<(), moria_crypto::Error>(())
//! ```

mod cache;
mod pem;
mod purpose;
mod store;

pub use crate::error::Rejection;
pub use cache::MAX_CACHE_ENTRIES;
pub use pem::TRUST_FILE_EXTENSIONS;
pub use purpose::Purpose;
pub use store::MAX_CHAIN_DEPTH;

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use foreign_types::ForeignTypeRef;
use openssl::stack::Stack;
use openssl::x509::store::X509Store;
use openssl::x509::{X509StoreContext, X509VerifyResult};

use crate::error::{Error, Result};
use crate::x509::{Certificate, Crl};
use cache::VerifyCache;
use store::Material;

/// Which certificates are checked against CRLs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrlCheck {
    /// No revocation checking.
    Off,
    /// The verified certificate only; its issuer's CRL must be loaded.
    Leaf,
    /// Every certificate of the chain; every CA's CRL must be loaded.
    All,
}

/// Loads the material of a [`Pki`].
#[derive(Debug, Default)]
pub struct PkiBuilder {
    roots: Vec<Certificate>,
    intermediates: Vec<Certificate>,
    crls: Vec<Crl>,
    crl_check: Option<CrlCheck>,
}

impl PkiBuilder {
    /// Trusts `root` (a self-signed CA).
    pub fn add_root(mut self, root: &Certificate) -> Self {
        self.roots.push(root.clone());
        self
    }

    /// Offers `cert` as an untrusted intermediate for path building.
    pub fn add_intermediate(mut self, cert: &Certificate) -> Self {
        self.intermediates.push(cert.clone());
        self
    }

    /// Adds a CRL; its signature is checked against its issuer when used.
    pub fn add_crl(mut self, crl: Crl) -> Self {
        self.crls.push(crl);
        self
    }

    /// Adds every certificate and CRL of a PEM document: self-signed certificates become
    /// roots, others intermediates.
    pub fn add_pem(mut self, pem: &[u8]) -> Result<Self> {
        let (certs, crls) = pem::split(pem)?;
        for cert in certs {
            if cert.subject() == cert.issuer() && cert.is_signed_by(&cert)? {
                self.roots.push(cert);
            } else {
                self.intermediates.push(cert);
            }
        }
        self.crls.extend(crls);
        Ok(self)
    }

    /// [`add_pem`](Self::add_pem) for a file, or for every `.pem`, `.crt`, `.cer` and `.crl`
    /// file of a directory.
    pub fn add_path(mut self, path: &Path) -> Result<Self> {
        for (file, bytes) in pem::read_all(path)? {
            self = self.add_pem(&bytes).map_err(|e| Error::InvalidInput {
                what: "PKI file",
                reason: format!("{}: {e}", file.display()),
            })?;
        }
        Ok(self)
    }

    /// Which certificates are checked against CRLs (default: [`CrlCheck::Leaf`] once a
    /// CRL is loaded, else [`CrlCheck::Off`]).
    pub fn crl_check(mut self, check: CrlCheck) -> Self {
        self.crl_check = Some(check);
        self
    }

    /// The store; at least one root is needed.
    pub fn build(self) -> Result<Pki> {
        if self.roots.is_empty() {
            return Err(Error::InvalidInput {
                what: "PKI",
                reason: "no trusted root (a self-signed CA certificate) was loaded".into(),
            });
        }
        let crl_check = self.crl_check.unwrap_or(if self.crls.is_empty() {
            CrlCheck::Off
        } else {
            CrlCheck::Leaf
        });
        let crls_valid_until = if crl_check == CrlCheck::Off {
            None
        } else {
            self.crls
                .iter()
                .filter_map(|crl| crl.next_update().transpose())
                .collect::<Result<Vec<_>>>()?
                .into_iter()
                .min()
        };
        let material = Material {
            roots: self.roots,
            intermediates: self.intermediates,
            crls: self.crls,
            crl_check,
        };
        let stores = Purpose::ALL
            .iter()
            .map(|&p| material.store(p, false))
            .collect::<Result<Vec<_>>>()?;
        Ok(Pki {
            inner: Arc::new(Inner {
                material,
                stores,
                crls_valid_until,
                cache: VerifyCache::default(),
            }),
        })
    }
}

struct Inner {
    material: Material,
    stores: Vec<X509Store>,
    crls_valid_until: Option<SystemTime>,
    cache: VerifyCache,
}

/// A set of trusted roots, intermediates and CRLs that verifies certificates. Cheap to clone
/// and share between fibers; clones share the cache.
#[derive(Clone)]
pub struct Pki {
    inner: Arc<Inner>,
}

impl Pki {
    /// An empty builder.
    pub fn builder() -> PkiBuilder {
        PkiBuilder::default()
    }

    /// `Ok` if `cert` chains to a trusted root and may be used for `purpose` now; otherwise
    /// [`Error::CertificateRefused`] with the reason. Successes are cached by fingerprint
    /// until the earliest `notAfter` of the chain (or `nextUpdate` of the CRLs).
    pub fn verify(&self, cert: &Certificate, purpose: Purpose) -> Result<()> {
        let now = SystemTime::now();
        let fingerprint = cert.fingerprint()?;
        if self.inner.cache.hit(&fingerprint, purpose, now) {
            return Ok(());
        }
        let until = self.check(cert, purpose)?;
        self.inner.cache.put(fingerprint, purpose, until);
        Ok(())
    }

    /// [`verify`](Self::verify) without the cache.
    pub fn verify_uncached(&self, cert: &Certificate, purpose: Purpose) -> Result<()> {
        self.check(cert, purpose).map(drop)
    }

    /// How many verifications are cached.
    pub fn cached(&self) -> usize {
        self.inner.cache.len()
    }

    /// A fresh OpenSSL store holding the roots, intermediates and CRLs, verifying TLS
    /// clients (for a TLS acceptor's client authentication).
    pub(crate) fn tls_client_store(&self) -> Result<X509Store> {
        self.inner.material.store(Purpose::TlsClient, true)
    }

    /// Runs OpenSSL's validation; on success, until when the result may be cached.
    fn check(&self, cert: &Certificate, purpose: Purpose) -> Result<SystemTime> {
        let index = Purpose::ALL.iter().position(|&p| p == purpose).unwrap_or(0);
        let store = &self.inner.stores[index];
        let mut untrusted = Stack::new()?;
        for c in &self.inner.material.intermediates {
            untrusted.push(c.x509.clone())?;
        }
        let mut ctx = X509StoreContext::new()?;
        let outcome = ctx.init(store, &cert.x509, &untrusted, |c| {
            if c.verify_cert()? {
                let chain: Vec<Certificate> = c
                    .chain()
                    .map(|s| {
                        s.iter()
                            .map(|x| Certificate::from_x509(x.to_owned()))
                            .collect()
                    })
                    .unwrap_or_default();
                Ok(Ok(chain))
            } else {
                Ok(Err((c.error(), c.error_depth())))
            }
        })?;
        let chain = match outcome {
            Ok(chain) => chain,
            Err((result, depth)) => return Err(refused(result, depth)),
        };
        if purpose == Purpose::CodeSigning && !lists_code_signing(cert) {
            return Err(Error::CertificateRefused {
                reason: Rejection::WrongPurpose,
                detail: "the certificate's extended key usage lacks codeSigning".into(),
                depth: 0,
            });
        }
        let mut until = chain
            .iter()
            .map(Certificate::not_after)
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .min()
            .unwrap_or_else(SystemTime::now);
        if let Some(crls) = self.inner.crls_valid_until {
            until = until.min(crls);
        }
        Ok(until)
    }
}

fn refused(result: X509VerifyResult, depth: u32) -> Error {
    Error::CertificateRefused {
        reason: Rejection::from_code(result.as_raw()),
        detail: result.error_string().to_owned(),
        depth,
    }
}

/// Whether `cert` has an extended key usage extension that lists `codeSigning`.
fn lists_code_signing(cert: &Certificate) -> bool {
    // SAFETY: the pointer comes from a live certificate; both calls only read (and cache)
    // the certificate's decoded extensions.
    let (flags, xku) = unsafe {
        let x = cert.x509.as_ptr();
        (
            openssl_sys::X509_get_extension_flags(x),
            openssl_sys::X509_get_extended_key_usage(x),
        )
    };
    flags & openssl_sys::EXFLAG_XKUSAGE != 0 && xku & openssl_sys::XKU_CODE_SIGN != 0
}

impl fmt::Debug for Pki {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pki")
            .field("roots", &self.inner.material.roots.len())
            .field("intermediates", &self.inner.material.intermediates.len())
            .field("crls", &self.inner.material.crls.len())
            .field("crl_check", &self.inner.material.crl_check)
            .finish_non_exhaustive()
    }
}
