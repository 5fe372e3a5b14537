//! [`Csr`]: PKCS#10 certificate signing requests, made from a key or read from PEM/DER.

use std::fmt;

use openssl::nid::Nid;
use openssl::stack::Stack;
use openssl::x509::{X509Req, X509ReqBuilder};

use super::builder::digest_for;
use super::{der, invalid, name};
use crate::error::{Error, Result};
use crate::keys::{KeyKind, PrivateKey, PublicKey, SignAlg, Signer};

/// A certificate signing request. A CA turns it into a certificate with
/// [`CertBuilder::from_csr`](super::CertBuilder::from_csr).
pub struct Csr {
    pub(crate) req: X509Req,
}

impl Csr {
    /// A request for `CN=common_name` with `hosts` as subject alternative names, signed by
    /// `key` (proof of possession).
    pub fn new(common_name: &str, hosts: &[&str], key: &PrivateKey) -> Result<Self> {
        let req = request(common_name, hosts, &key.public_key()?, key)?;
        Ok(Csr { req })
    }

    /// The same request signed by `signer`, a key that may never leave a hardware token.
    /// OpenSSL signs only with keys in memory, so the request is first signed with a
    /// throwaway key of the same type (hence the same algorithm identifier), and that
    /// signature is then replaced by the signer's over the same request info.
    pub fn new_with_signer(common_name: &str, hosts: &[&str], signer: &dyn Signer) -> Result<Self> {
        let public = signer.public_key()?;
        let alg = SignAlg::for_x509(public.kind())?;
        let throwaway = PrivateKey::generate_kind(match public.kind() {
            KeyKind::Rsa(_) => KeyKind::Rsa(2048),
            other => other,
        })?;
        let draft = request(common_name, hosts, &public, &throwaway)?.to_der()?;
        let [info, algorithm, _] = der::sequence_elements(&draft)?[..] else {
            return Err(Error::InvalidInput {
                what: "CSR DER",
                reason: "expected request info, algorithm and signature".into(),
            });
        };
        let signature = signer.sign(alg, info)?;
        let csr = Csr::from_der(&der::sequence(&[
            info,
            algorithm,
            &der::bit_string(&signature),
        ]))?;
        csr.verify()?;
        Ok(csr)
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

/// A request for `public`, signed by `signing_key`.
fn request(
    common_name: &str,
    hosts: &[&str],
    public: &PublicKey,
    signing_key: &PrivateKey,
) -> Result<X509Req> {
    let mut b = X509ReqBuilder::new()?;
    b.set_version(0)?;
    let subject = name::build(&[(Nid::COMMONNAME, common_name.to_owned())])?;
    b.set_subject_name(&subject)?;
    b.set_pubkey(&public.pkey)?;
    if !hosts.is_empty() {
        let mut extensions = Stack::new()?;
        extensions.push(name::alt_names(hosts).build(&b.x509v3_context(None))?)?;
        b.add_extensions(&extensions)?;
    }
    b.sign(&signing_key.pkey, digest_for(signing_key.kind())?)?;
    Ok(b.build())
}
