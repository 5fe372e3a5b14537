//! A server's identity: certificate chain plus private key, from PEM or self-signed.

use std::fmt;
use std::path::Path;

use openssl::asn1::Asn1Time;
use openssl::bn::{BigNum, MsbOption};
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::x509::extension::{
    BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectKeyIdentifier,
};
use openssl::x509::{X509Builder, X509NameBuilder, X509};

use crate::error::{Error, Result};
use crate::keys::PrivateKey;
use crate::x509::Certificate;

/// Validity of a [`Identity::self_signed`] certificate, in days.
pub const SELF_SIGNED_DAYS: u32 = 365;

/// A certificate chain (leaf first) and the leaf's private key.
#[derive(Clone)]
pub struct Identity {
    pub(crate) leaf: X509,
    pub(crate) chain: Vec<X509>,
    pub(crate) key: PKey<Private>,
}

impl Identity {
    /// From a certificate (made or read with [`crate::x509`]), the intermediates that chain
    /// it to a root (in order, without the root) and the certificate's private key.
    pub fn new(cert: &Certificate, chain: &[Certificate], key: &PrivateKey) -> Result<Self> {
        if !cert.x509.public_key()?.public_eq(&key.pkey) {
            return Err(invalid(
                "private key",
                "the key does not match the certificate".into(),
            ));
        }
        Ok(Identity {
            leaf: cert.x509.clone(),
            chain: chain.iter().map(|c| c.x509.clone()).collect(),
            key: key.pkey.clone(),
        })
    }

    /// From a PEM certificate chain (leaf first, then intermediates) and a PEM private key.
    pub fn from_pem(chain_pem: &[u8], key_pem: &[u8]) -> Result<Self> {
        let mut certs = X509::stack_from_pem(chain_pem)
            .map_err(|e| invalid("certificate PEM", e.to_string()))?
            .into_iter();
        let leaf = certs
            .next()
            .ok_or_else(|| invalid("certificate PEM", "no certificate found".into()))?;
        let key = PKey::private_key_from_pem(key_pem)
            .map_err(|e| invalid("private key PEM", e.to_string()))?;
        if !leaf.public_key()?.public_eq(&key) {
            return Err(invalid(
                "private key PEM",
                "the key does not match the certificate".into(),
            ));
        }
        Ok(Identity {
            leaf,
            chain: certs.collect(),
            key,
        })
    }

    /// From a PEM certificate chain file and a PEM private key file (read on the offload
    /// pool, so a fiber's worker never stalls on the disk).
    pub fn from_pem_files(chain_path: &Path, key_path: &Path) -> Result<Self> {
        let (chain_path, key_path) = (chain_path.to_owned(), key_path.to_owned());
        let (chain, key) = moria_runtime::blocking_io(move || {
            Ok((std::fs::read(chain_path)?, std::fs::read(key_path)?))
        })?;
        Self::from_pem(&chain, &key)
    }

    /// A fresh ECDSA P-256 certificate for `hosts` (DNS names or IP addresses, all in the
    /// subject alternative names, the first as common name), valid for [`SELF_SIGNED_DAYS`].
    /// For development: clients must be told to trust it.
    pub fn self_signed(hosts: &[&str]) -> Result<Self> {
        let first = *hosts
            .first()
            .ok_or_else(|| invalid("host list", "at least one host is needed".into()))?;
        let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
        let key = PKey::from_ec_key(EcKey::generate(&group)?)?;

        let mut name = X509NameBuilder::new()?;
        name.append_entry_by_nid(Nid::COMMONNAME, first)?;
        let name = name.build();

        let mut serial = BigNum::new()?;
        serial.rand(127, MsbOption::MAYBE_ZERO, false)?;

        let mut builder = X509Builder::new()?;
        builder.set_version(2)?;
        builder.set_serial_number(serial.to_asn1_integer()?.as_ref())?;
        builder.set_subject_name(&name)?;
        builder.set_issuer_name(&name)?;
        builder.set_pubkey(&key)?;
        builder.set_not_before(Asn1Time::days_from_now(0)?.as_ref())?;
        builder.set_not_after(Asn1Time::days_from_now(SELF_SIGNED_DAYS)?.as_ref())?;

        let san = crate::x509::name::alt_names(hosts).build(&builder.x509v3_context(None, None))?;
        builder.append_extension(san)?;
        builder.append_extension(BasicConstraints::new().critical().build()?)?;
        builder.append_extension(
            KeyUsage::new()
                .critical()
                .digital_signature()
                .key_cert_sign()
                .build()?,
        )?;
        builder.append_extension(ExtendedKeyUsage::new().server_auth().build()?)?;
        let ski = SubjectKeyIdentifier::new().build(&builder.x509v3_context(None, None))?;
        builder.append_extension(ski)?;
        builder.sign(&key, MessageDigest::sha256())?;

        Ok(Identity {
            leaf: builder.build(),
            chain: Vec::new(),
            key,
        })
    }

    /// The certificate chain as PEM (leaf first): what a client adds as a trusted root for a
    /// self-signed identity.
    pub fn certificate_pem(&self) -> Result<Vec<u8>> {
        let mut pem = self.leaf.to_pem()?;
        for cert in &self.chain {
            pem.extend(cert.to_pem()?);
        }
        Ok(pem)
    }

    /// The private key as PKCS#8 PEM.
    pub fn private_key_pem(&self) -> Result<Vec<u8>> {
        Ok(self.key.private_key_to_pem_pkcs8()?)
    }
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity")
            .field("subject", &self.leaf.subject_name())
            .field("chain_len", &self.chain.len())
            .finish_non_exhaustive()
    }
}

fn invalid(what: &'static str, reason: String) -> Error {
    Error::InvalidInput { what, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_signed_round_trips_through_pem() {
        let id = Identity::self_signed(&["localhost", "127.0.0.1"]).unwrap();
        let back = Identity::from_pem(
            &id.certificate_pem().unwrap(),
            &id.private_key_pem().unwrap(),
        )
        .unwrap();
        let sans = back.leaf.subject_alt_names().unwrap();
        assert_eq!(sans.len(), 2);
        assert_eq!(sans.get(0).unwrap().dnsname(), Some("localhost"));
        assert_eq!(sans.get(1).unwrap().ipaddress(), Some(&[127, 0, 0, 1][..]));
        let days = Asn1Time::days_from_now(0)
            .unwrap()
            .diff(back.leaf.not_after())
            .unwrap()
            .days;
        assert_eq!(days, SELF_SIGNED_DAYS as i32);
    }

    #[test]
    fn bad_inputs_error() {
        assert!(matches!(
            Identity::self_signed(&[]),
            Err(Error::InvalidInput { .. })
        ));
        let a = Identity::self_signed(&["a"]).unwrap();
        let b = Identity::self_signed(&["b"]).unwrap();
        assert!(matches!(
            Identity::from_pem(&a.certificate_pem().unwrap(), &b.private_key_pem().unwrap()),
            Err(Error::InvalidInput { .. })
        ));
        assert!(matches!(
            Identity::from_pem(b"junk", &a.private_key_pem().unwrap()),
            Err(Error::InvalidInput { .. })
        ));
    }
}
