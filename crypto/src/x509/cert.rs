//! [`Certificate`]: an X.509 certificate read from PEM/DER, with its fields and a readable
//! print.

use std::fmt;
use std::net::IpAddr;
use std::time::SystemTime;

use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::x509::X509;

use super::{invalid, name, time};
use crate::encoding::hex;
use crate::error::Result;
use crate::keys::PublicKey;

/// An X.509 certificate. Cheap to clone (reference-counted by OpenSSL); equal when their
/// DER encodings are.
#[derive(Clone)]
pub struct Certificate {
    pub(crate) x509: X509,
}

impl Certificate {
    /// The first certificate of a PEM document.
    pub fn from_pem(pem: &[u8]) -> Result<Self> {
        let x509 = X509::from_pem(pem).map_err(|e| invalid("certificate PEM", e))?;
        Ok(Certificate { x509 })
    }

    /// Every certificate of a PEM document, in order (empty if there is none).
    pub fn chain_from_pem(pem: &[u8]) -> Result<Vec<Self>> {
        let all = X509::stack_from_pem(pem).map_err(|e| invalid("certificate PEM", e))?;
        Ok(all.into_iter().map(|x509| Certificate { x509 }).collect())
    }

    /// A DER certificate.
    pub fn from_der(der: &[u8]) -> Result<Self> {
        let x509 = X509::from_der(der).map_err(|e| invalid("certificate DER", e))?;
        Ok(Certificate { x509 })
    }

    /// The certificate as PEM.
    pub fn to_pem(&self) -> Result<Vec<u8>> {
        Ok(self.x509.to_pem()?)
    }

    /// The certificate as DER.
    pub fn to_der(&self) -> Result<Vec<u8>> {
        Ok(self.x509.to_der()?)
    }

    /// The subject as one line (`CN=api, O=Moria`).
    pub fn subject(&self) -> String {
        name::one_line(self.x509.subject_name())
    }

    /// The issuer as one line.
    pub fn issuer(&self) -> String {
        name::one_line(self.x509.issuer_name())
    }

    /// The subject's common name, if any.
    pub fn common_name(&self) -> Option<String> {
        name::first(self.x509.subject_name(), Nid::COMMONNAME)
    }

    /// The DNS names and IP addresses of the subject alternative names.
    pub fn hosts(&self) -> Vec<String> {
        let Some(names) = self.x509.subject_alt_names() else {
            return Vec::new();
        };
        names
            .iter()
            .filter_map(|n| {
                n.dnsname().map(str::to_owned).or_else(|| {
                    n.ipaddress().and_then(|ip| match ip.len() {
                        4 => <[u8; 4]>::try_from(ip)
                            .ok()
                            .map(|a| IpAddr::from(a).to_string()),
                        16 => <[u8; 16]>::try_from(ip)
                            .ok()
                            .map(|a| IpAddr::from(a).to_string()),
                        _ => None,
                    })
                })
            })
            .collect()
    }

    /// The serial number in lowercase hex.
    pub fn serial(&self) -> Result<String> {
        Ok(hex(&self.x509.serial_number().to_bn()?.to_vec()))
    }

    /// Start of the validity period.
    pub fn not_before(&self) -> Result<SystemTime> {
        time::system(self.x509.not_before())
    }

    /// End of the validity period.
    pub fn not_after(&self) -> Result<SystemTime> {
        time::system(self.x509.not_after())
    }

    /// The subject's public key.
    pub fn public_key(&self) -> Result<PublicKey> {
        PublicKey::from_pkey(self.x509.public_key()?)
    }

    /// The SHA-256 fingerprint of the DER encoding.
    pub fn fingerprint(&self) -> Result<[u8; 32]> {
        let digest = self.x509.digest(MessageDigest::sha256())?;
        let mut out = [0u8; 32];
        out.copy_from_slice(&digest);
        Ok(out)
    }

    /// Whether this certificate's signature verifies under `issuer`'s public key.
    pub fn is_signed_by(&self, issuer: &Certificate) -> Result<bool> {
        Ok(self.x509.verify(issuer.x509.public_key()?.as_ref())?)
    }

    /// A readable print of every field, as `openssl x509 -text` shows it.
    pub fn to_text(&self) -> Result<String> {
        let text = self.x509.to_text()?;
        Ok(String::from_utf8_lossy(&text).into_owned())
    }

    /// Wraps an OpenSSL certificate.
    pub(crate) fn from_x509(x509: X509) -> Self {
        Certificate { x509 }
    }
}

impl PartialEq for Certificate {
    fn eq(&self, other: &Self) -> bool {
        matches!((self.to_der(), other.to_der()), (Ok(a), Ok(b)) if a == b)
    }
}

impl Eq for Certificate {}

impl fmt::Debug for Certificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Certificate")
            .field("subject", &self.subject())
            .field("issuer", &self.issuer())
            .finish_non_exhaustive()
    }
}
