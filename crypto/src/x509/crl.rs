//! Certificate revocation lists: [`CrlBuilder`] makes and signs one, [`Crl`] reads one.

use std::fmt;
use std::time::{Duration, SystemTime};

use openssl::asn1::{Asn1Object, Asn1OctetString};
use openssl::x509::extension::AuthorityKeyIdentifier;
use openssl::x509::{
    CrlStatus, X509Builder, X509Crl, X509CrlBuilder, X509Extension, X509RevokedBuilder,
};

use super::builder::{digest_for, CLOCK_SKEW};
use super::{invalid, name, time, Certificate};
use crate::encoding::hex;
use crate::error::{Error, Result};
use crate::keys::PrivateKey;

/// How long a CRL is current unless [`CrlBuilder::valid_for`] says otherwise: seven days.
pub const DEFAULT_CRL_VALIDITY: Duration = Duration::from_secs(7 * 86_400);

/// Builds a version 2 CRL for one issuing CA.
#[derive(Debug)]
pub struct CrlBuilder {
    issuer: Certificate,
    revoked: Vec<(Certificate, SystemTime)>,
    validity: Duration,
    number: Option<u64>,
}

impl CrlBuilder {
    /// An empty list for the CA `issuer`.
    pub fn new(issuer: &Certificate) -> Self {
        CrlBuilder {
            issuer: issuer.clone(),
            revoked: Vec::new(),
            validity: DEFAULT_CRL_VALIDITY,
            number: None,
        }
    }

    /// Revokes `cert` as of `at`; it must have been issued by this CA.
    pub fn revoke(mut self, cert: &Certificate, at: SystemTime) -> Self {
        self.revoked.push((cert.clone(), at));
        self
    }

    /// `nextUpdate` is `validity` from now (default: [`DEFAULT_CRL_VALIDITY`]); `lastUpdate` is
    /// [`CLOCK_SKEW`] ago, as a certificate's `notBefore`.
    pub fn valid_for(mut self, validity: Duration) -> Self {
        self.validity = validity;
        self
    }

    /// The CRL number, which must grow with each list (default: the Unix time in seconds).
    pub fn number(mut self, number: u64) -> Self {
        self.number = Some(number);
        self
    }

    /// The CRL signed with the CA's key.
    pub fn sign(self, issuer_key: &PrivateKey) -> Result<Crl> {
        if self.issuer.public_key()? != issuer_key.public_key()? {
            return Err(Error::InvalidInput {
                what: "CRL issuer key",
                reason: "the key does not match the issuer certificate".into(),
            });
        }
        let mut b = X509CrlBuilder::new()?;
        b.set_issuer_name(self.issuer.x509.subject_name())?;
        let now = SystemTime::now();
        // lastUpdate is backdated like a certificate's notBefore: a verifier whose clock is a
        // little behind (OpenSSL reads the coarse `time()`, which can still be on the previous
        // second) would otherwise find a list issued this second "not yet valid".
        b.set_last_update(time::asn1(now - CLOCK_SKEW)?.as_ref())?;
        b.set_next_update(time::asn1(now + self.validity)?.as_ref())?;
        for (cert, at) in &self.revoked {
            if cert.x509.issuer_name().to_der()? != self.issuer.x509.subject_name().to_der()? {
                return Err(Error::InvalidInput {
                    what: "revoked certificate",
                    reason: format!(
                        "{} was not issued by {}",
                        cert.subject(),
                        self.issuer.subject()
                    ),
                });
            }
            let mut revoked = X509RevokedBuilder::new()?;
            revoked.set_serial_number(cert.x509.serial_number())?;
            revoked.set_revocation_date(time::asn1(*at)?.as_ref())?;
            b.add_revoked(revoked.build())?;
        }
        b.sort()?;
        let context_holder = X509Builder::new()?;
        let aki = AuthorityKeyIdentifier::new()
            .keyid(true)
            .build(&context_holder.x509v3_context(Some(&self.issuer.x509), None))?;
        b.append_extension(aki)?;
        let number = self.number.unwrap_or_else(|| {
            now.duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
        b.append_extension(crl_number(number)?)?;
        b.sign(&issuer_key.pkey, digest_for(issuer_key.kind())?)?;
        Ok(Crl { crl: b.build()? })
    }
}

/// The non-critical CRL number extension (RFC 5280 §5.2.3).
fn crl_number(number: u64) -> Result<X509Extension> {
    let bytes = number.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count().min(7);
    let mut der = vec![0x02];
    let body = &bytes[skip..];
    let pad = body[0] & 0x80 != 0;
    der.push((body.len() + usize::from(pad)) as u8);
    if pad {
        der.push(0);
    }
    der.extend_from_slice(body);
    let oid = Asn1Object::from_str("2.5.29.20")?;
    let contents = Asn1OctetString::new_from_bytes(&der)?;
    Ok(X509Extension::new_from_der(&oid, false, &contents)?)
}

/// A certificate revocation list.
pub struct Crl {
    pub(crate) crl: X509Crl,
}

impl Crl {
    /// A PEM CRL (`BEGIN X509 CRL`).
    pub fn from_pem(pem: &[u8]) -> Result<Self> {
        let crl = X509Crl::from_pem(pem).map_err(|e| invalid("CRL PEM", e))?;
        Ok(Crl { crl })
    }

    /// A DER CRL.
    pub fn from_der(der: &[u8]) -> Result<Self> {
        let crl = X509Crl::from_der(der).map_err(|e| invalid("CRL DER", e))?;
        Ok(Crl { crl })
    }

    /// The CRL as PEM.
    pub fn to_pem(&self) -> Result<Vec<u8>> {
        Ok(self.crl.to_pem()?)
    }

    /// The CRL as DER.
    pub fn to_der(&self) -> Result<Vec<u8>> {
        Ok(self.crl.to_der()?)
    }

    /// The issuing CA as one line.
    pub fn issuer(&self) -> String {
        name::one_line(self.crl.issuer_name())
    }

    /// When the list was issued.
    pub fn last_update(&self) -> Result<SystemTime> {
        time::system(self.crl.last_update())
    }

    /// When the next list is due, if stated.
    pub fn next_update(&self) -> Result<Option<SystemTime>> {
        self.crl.next_update().map(time::system).transpose()
    }

    /// The revoked serial numbers in lowercase hex.
    pub fn revoked_serials(&self) -> Result<Vec<String>> {
        let Some(revoked) = self.crl.get_revoked() else {
            return Ok(Vec::new());
        };
        revoked
            .iter()
            .map(|r| Ok(hex(&r.serial_number().to_bn()?.to_vec())))
            .collect()
    }

    /// Whether `cert` is on the list (by issuer and serial; the CRL's signature is checked by
    /// [`Pki`](crate::pki::Pki), not here).
    pub fn is_revoked(&self, cert: &Certificate) -> bool {
        !matches!(self.crl.get_by_cert(&cert.x509), CrlStatus::NotRevoked)
    }

    /// Whether the CRL's signature verifies under `issuer`'s key.
    pub fn is_signed_by(&self, issuer: &Certificate) -> Result<bool> {
        Ok(self.crl.verify(issuer.x509.public_key()?.as_ref())?)
    }
}

impl fmt::Display for Crl {
    /// A readable summary: issuer, update times and revoked serials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Certificate Revocation List")?;
        writeln!(f, "    Issuer: {}", self.issuer())?;
        writeln!(f, "    Last Update: {}", self.crl.last_update())?;
        match self.crl.next_update() {
            Some(next) => writeln!(f, "    Next Update: {next}")?,
            None => writeln!(f, "    Next Update: none")?,
        }
        match self.crl.get_revoked() {
            Some(revoked) if !revoked.is_empty() => {
                writeln!(f, "    Revoked Certificates:")?;
                for r in revoked {
                    let serial = r
                        .serial_number()
                        .to_bn()
                        .map_or_else(|_| "?".into(), |bn| hex(&bn.to_vec()));
                    writeln!(
                        f,
                        "        Serial {serial}, revoked {}",
                        r.revocation_date()
                    )?;
                }
            }
            _ => writeln!(f, "    No Revoked Certificates.")?,
        }
        Ok(())
    }
}

impl fmt::Debug for Crl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Crl")
            .field("issuer", &self.issuer())
            .finish_non_exhaustive()
    }
}
