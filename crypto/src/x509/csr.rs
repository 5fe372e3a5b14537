//! [`Csr`]: PKCS#10 certificate signing requests, made from a key or read from PEM/DER.

use std::fmt;
use std::net::IpAddr;

use openssl::nid::Nid;
use openssl::stack::Stack;
use openssl::x509::extension::SubjectAlternativeName;
use openssl::x509::{X509Req, X509ReqBuilder};

use super::builder::digest_for;
use super::name;
use crate::error::{Error, Result};
use crate::keys::{PrivateKey, PublicKey};

/// A certificate signing request. A CA turns it into a certificate with
/// [`CertBuilder::from_csr`](super::CertBuilder::from_csr).
pub struct Csr {
    pub(crate) req: X509Req,
}

impl Csr {
    /// A request for `CN=common_name` with `hosts` as subject alternative names, signed by
    /// `key` (proof of possession).
    pub fn new(common_name: &str, hosts: &[&str], key: &PrivateKey) -> Result<Self> {
        let mut b = X509ReqBuilder::new()?;
        b.set_version(0)?;
        let subject = name::build(&[(Nid::COMMONNAME, common_name.to_owned())])?;
        b.set_subject_name(&subject)?;
        b.set_pubkey(&key.pkey)?;
        if !hosts.is_empty() {
            let mut san = SubjectAlternativeName::new();
            for host in hosts {
                if host.parse::<IpAddr>().is_ok() {
                    san.ip(host);
                } else {
                    san.dns(host);
                }
            }
            let mut extensions = Stack::new()?;
            extensions.push(san.build(&b.x509v3_context(None))?)?;
            b.add_extensions(&extensions)?;
        }
        b.sign(&key.pkey, digest_for(key.kind())?)?;
        Ok(Csr { req: b.build() })
    }

    /// A PEM request (`BEGIN CERTIFICATE REQUEST`).
    pub fn from_pem(pem: &[u8]) -> Result<Self> {
        let req = X509Req::from_pem(pem).map_err(|e| invalid("CSR PEM", e))?;
        Ok(Csr { req })
    }

    /// A DER request.
    pub fn from_der(der: &[u8]) -> Result<Self> {
        let req = X509Req::from_der(der).map_err(|e| invalid("CSR DER", e))?;
        Ok(Csr { req })
    }

    /// The request as PEM.
    pub fn to_pem(&self) -> Result<Vec<u8>> {
        Ok(self.req.to_pem()?)
    }

    /// The request as DER.
    pub fn to_der(&self) -> Result<Vec<u8>> {
        Ok(self.req.to_der()?)
    }

    /// The subject as one line.
    pub fn subject(&self) -> String {
        name::one_line(self.req.subject_name())
    }

    /// The subject's common name, if any.
    pub fn common_name(&self) -> Option<String> {
        name::first(self.req.subject_name(), Nid::COMMONNAME)
    }

    /// The requester's public key.
    pub fn public_key(&self) -> Result<PublicKey> {
        PublicKey::from_pkey(self.req.public_key()?)
    }

    /// `Ok` if the request is signed by its own key, else [`Error::BadSignature`].
    pub fn verify(&self) -> Result<()> {
        let key = self.req.public_key()?;
        match self.req.verify(&key) {
            Ok(true) => Ok(()),
            Ok(false) | Err(_) => Err(Error::BadSignature),
        }
    }

    /// A readable print, as `openssl req -text` shows it.
    pub fn to_text(&self) -> Result<String> {
        Ok(String::from_utf8_lossy(&self.req.to_text()?).into_owned())
    }
}

impl fmt::Debug for Csr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Csr")
            .field("subject", &self.subject())
            .finish_non_exhaustive()
    }
}

fn invalid(what: &'static str, e: openssl::error::ErrorStack) -> Error {
    Error::InvalidInput {
        what,
        reason: e.to_string(),
    }
}
