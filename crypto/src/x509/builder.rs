//! [`CertBuilder`]: self-signed and CA-signed certificates with safe defaults.

use std::time::{Duration, SystemTime};

use openssl::bn::{BigNum, MsbOption};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::x509::extension::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectKeyIdentifier,
};
use openssl::x509::X509Builder;

use super::{name, time, Certificate, Csr};
use crate::error::{Error, Result};
use crate::keys::{KeyKind, PrivateKey, PublicKey};

/// Validity of a certificate unless [`CertBuilder::valid_for`] says otherwise: one year.
pub const DEFAULT_VALIDITY: Duration = Duration::from_secs(365 * 86_400);
/// How far in the past `notBefore` is set by default, for clocks slightly behind ours.
pub const CLOCK_SKEW: Duration = Duration::from_secs(300);

/// What a certificate may be used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Usage {
    /// A certificate authority: signs certificates and CRLs; `path_len` limits the number
    /// of intermediate CAs below it (`None`: no limit).
    Ca {
        /// Most CAs allowed below this one.
        path_len: Option<u32>,
    },
    /// A TLS server (extended key usage `serverAuth`).
    TlsServer,
    /// A TLS client (extended key usage `clientAuth`).
    TlsClient,
    /// Code signing (extended key usage `codeSigning`).
    CodeSigning,
}

/// Builds a certificate. Defaults: valid from [`CLOCK_SKEW`] ago for
/// [`DEFAULT_VALIDITY`], usage [`Usage::TlsServer`], a random 127-bit serial, SHA-256
/// (SHA-384 for P-384 issuers, none for Ed25519), subject and authority key identifiers; a
/// TLS server with no host gets its common name as DNS name.
#[derive(Clone, Debug)]
pub struct CertBuilder {
    subject: Vec<(Nid, String)>,
    hosts: Vec<String>,
    not_before: Option<SystemTime>,
    not_after: Option<SystemTime>,
    validity: Duration,
    usages: Vec<Usage>,
    public_key: Option<PublicKey>,
}

impl CertBuilder {
    /// A certificate for the subject `CN=common_name`.
    pub fn new(common_name: &str) -> Self {
        CertBuilder {
            subject: vec![(Nid::COMMONNAME, common_name.to_owned())],
            hosts: Vec::new(),
            not_before: None,
            not_after: None,
            validity: DEFAULT_VALIDITY,
            usages: Vec::new(),
            public_key: None,
        }
    }

    /// A certificate for the subject and public key of `csr`, once its signature verifies.
    /// Extensions the CSR asks for are not copied: the issuer states hosts and usages.
    pub fn from_csr(csr: &Csr) -> Result<Self> {
        csr.verify()?;
        let mut builder = CertBuilder::new("");
        builder.subject = name::entries(csr.req.subject_name());
        builder.public_key = Some(csr.public_key()?);
        Ok(builder)
    }

    /// Adds `O=organization` to the subject.
    pub fn organization(mut self, organization: &str) -> Self {
        self.subject
            .push((Nid::ORGANIZATIONNAME, organization.to_owned()));
        self
    }

    /// Adds DNS names or IP addresses to the subject alternative names.
    pub fn hosts(mut self, hosts: &[&str]) -> Self {
        self.hosts.extend(hosts.iter().map(|h| (*h).to_owned()));
        self
    }

    /// Adds a usage; several may be combined (default: [`Usage::TlsServer`] alone).
    pub fn usage(mut self, usage: Usage) -> Self {
        self.usages.push(usage);
        self
    }

    /// Valid for `validity` from now (default: [`DEFAULT_VALIDITY`]).
    pub fn valid_for(mut self, validity: Duration) -> Self {
        self.validity = validity;
        self
    }

    /// Valid exactly from `not_before` to `not_after` (overrides [`valid_for`](Self::valid_for)).
    pub fn valid_between(mut self, not_before: SystemTime, not_after: SystemTime) -> Self {
        self.not_before = Some(not_before);
        self.not_after = Some(not_after);
        self
    }

    /// The subject's public key (set by [`from_csr`](Self::from_csr); needed by
    /// [`issue`](Self::issue)).
    pub fn public_key(mut self, key: PublicKey) -> Self {
        self.public_key = Some(key);
        self
    }

    /// A self-signed certificate for `key` (a root CA, or a development certificate).
    pub fn self_signed(mut self, key: &PrivateKey) -> Result<Certificate> {
        self.public_key = Some(key.public_key()?);
        self.build(None, key)
    }

    /// A certificate signed by the CA `issuer` with its key `issuer_key`.
    pub fn issue(self, issuer: &Certificate, issuer_key: &PrivateKey) -> Result<Certificate> {
        if issuer.public_key()? != issuer_key.public_key()? {
            return Err(Error::InvalidInput {
                what: "issuer key",
                reason: "the key does not match the issuer certificate".into(),
            });
        }
        self.build(Some(issuer), issuer_key)
    }

    fn build(self, issuer: Option<&Certificate>, signer: &PrivateKey) -> Result<Certificate> {
        let public = self
            .public_key
            .as_ref()
            .ok_or_else(|| Error::InvalidInput {
                what: "certificate",
                reason: "no subject public key: call public_key or from_csr".into(),
            })?;
        let digest = digest_for(signer.kind())?;
        let subject = name::build(&self.subject)?;
        let mut b = X509Builder::new()?;
        b.set_version(2)?;
        let mut serial = BigNum::new()?;
        serial.rand(127, MsbOption::MAYBE_ZERO, false)?;
        b.set_serial_number(serial.to_asn1_integer()?.as_ref())?;
        b.set_subject_name(&subject)?;
        b.set_issuer_name(issuer.map_or(&*subject, |i| i.x509.subject_name()))?;
        b.set_pubkey(&public.pkey)?;
        let now = SystemTime::now();
        let not_before = self.not_before.unwrap_or(now - CLOCK_SKEW);
        let not_after = self.not_after.unwrap_or(now + self.validity);
        b.set_not_before(time::asn1(not_before)?.as_ref())?;
        b.set_not_after(time::asn1(not_after)?.as_ref())?;
        self.add_extensions(&mut b, issuer)?;
        b.sign(&signer.pkey, digest)?;
        Ok(Certificate::from_x509(b.build()))
    }

    /// Basic constraints, key usage, extended key usage, SAN, key identifiers.
    fn add_extensions(&self, b: &mut X509Builder, issuer: Option<&Certificate>) -> Result<()> {
        let usages = if self.usages.is_empty() {
            vec![Usage::TlsServer]
        } else {
            self.usages.clone()
        };
        let mut constraints = BasicConstraints::new();
        constraints.critical();
        let mut key_usage = KeyUsage::new();
        key_usage.critical().digital_signature();
        let mut eku = ExtendedKeyUsage::new();
        let mut any_eku = false;
        for usage in &usages {
            match usage {
                Usage::Ca { path_len } => {
                    constraints.ca();
                    if let Some(len) = path_len {
                        constraints.pathlen(*len);
                    }
                    key_usage.key_cert_sign().crl_sign();
                    continue;
                }
                Usage::TlsServer => eku.server_auth(),
                Usage::TlsClient => eku.client_auth(),
                Usage::CodeSigning => eku.code_signing(),
            };
            any_eku = true;
        }
        b.append_extension(constraints.build()?)?;
        b.append_extension(key_usage.build()?)?;
        if any_eku {
            b.append_extension(eku.build()?)?;
        }
        let mut hosts = self.hosts.clone();
        if hosts.is_empty() && usages.contains(&Usage::TlsServer) {
            hosts.extend(
                self.subject
                    .iter()
                    .find(|(nid, _)| *nid == Nid::COMMONNAME)
                    .map(|(_, cn)| cn.clone()),
            );
        }
        let issuer = issuer.map(|i| &*i.x509);
        if !hosts.is_empty() {
            let ext = name::alt_names(&hosts).build(&b.x509v3_context(issuer, None))?;
            b.append_extension(ext)?;
        }
        let ski = SubjectKeyIdentifier::new().build(&b.x509v3_context(None, None))?;
        b.append_extension(ski)?;
        let aki = AuthorityKeyIdentifier::new()
            .keyid(false)
            .build(&b.x509v3_context(issuer, None))?;
        b.append_extension(aki)?;
        Ok(())
    }
}

/// The digest a key of `kind` signs certificates, CSRs and CRLs with.
pub(crate) fn digest_for(kind: KeyKind) -> Result<MessageDigest> {
    match kind {
        KeyKind::Rsa(_) | KeyKind::EcdsaP256 => Ok(MessageDigest::sha256()),
        KeyKind::EcdsaP384 => Ok(MessageDigest::sha384()),
        KeyKind::Ed25519 => Ok(MessageDigest::null()),
        KeyKind::X25519 => Err(Error::WrongKey {
            alg: "certificate signing",
            key: kind.to_string(),
        }),
    }
}
