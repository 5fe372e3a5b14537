//! [`PrivateKey`]: generate by name, import and export PEM/DER (PKCS#8, plain or encrypted
//! with a password).

use std::fmt;

use openssl::ec::{EcGroup, EcKey};
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::rsa::Rsa;
use openssl::symm::Cipher;

use super::kind::KeyKind;
use super::malformed;
use super::public::PublicKey;
use crate::error::{Error, Result};

/// PEM label of an encrypted PKCS#8 key.
const ENCRYPTED_PEM_LABEL: &[u8] = b"-----BEGIN ENCRYPTED PRIVATE KEY-----";

/// A private key of a [`KeyKind`]: RSA of at least 2048 bits, ECDSA P-256/P-384, Ed25519 or
/// X25519. Cheap to clone (the key is reference-counted by OpenSSL).
#[derive(Clone)]
pub struct PrivateKey {
    pub(crate) pkey: PKey<Private>,
    kind: KeyKind,
}

impl PrivateKey {
    /// A fresh key of the type called `name` (`rsa-2048`, `ecdsa-p256`, `ed25519`, ...).
    pub fn generate(name: &str) -> Result<Self> {
        Self::generate_kind(KeyKind::from_name(name)?)
    }

    /// A fresh key of type `kind`.
    pub fn generate_kind(kind: KeyKind) -> Result<Self> {
        let pkey = match kind {
            KeyKind::Rsa(bits) => {
                KeyKind::from_name(&format!("rsa-{bits}"))?;
                PKey::from_rsa(Rsa::generate(bits)?)?
            }
            KeyKind::EcdsaP256 => ec(Nid::X9_62_PRIME256V1)?,
            KeyKind::EcdsaP384 => ec(Nid::SECP384R1)?,
            KeyKind::Ed25519 => PKey::generate_ed25519()?,
            KeyKind::X25519 => PKey::generate_x25519()?,
        };
        Ok(PrivateKey { pkey, kind })
    }

    /// From an unencrypted PEM key (PKCS#8, or the traditional RSA/EC forms).
    pub fn from_pem(pem: &[u8]) -> Result<Self> {
        if pem
            .windows(ENCRYPTED_PEM_LABEL.len())
            .any(|w| w == ENCRYPTED_PEM_LABEL)
        {
            return Err(Error::MalformedKey(
                "the key is encrypted: use from_pem_encrypted with its password".into(),
            ));
        }
        // The empty passphrase stops OpenSSL from prompting on a terminal.
        let pkey = PKey::private_key_from_pem_passphrase(pem, b"")
            .map_err(|e| malformed("private key PEM", e))?;
        Self::from_pkey(pkey)
    }

    /// From an unencrypted DER key (PKCS#8, or the traditional RSA/EC forms).
    pub fn from_der(der: &[u8]) -> Result<Self> {
        let pkey = PKey::private_key_from_der(der).map_err(|e| malformed("private key DER", e))?;
        Self::from_pkey(pkey)
    }

    /// From a password-encrypted PKCS#8 PEM key (`ENCRYPTED PRIVATE KEY`).
    pub fn from_pem_encrypted(pem: &[u8], password: &[u8]) -> Result<Self> {
        let pkey = PKey::private_key_from_pem_passphrase(pem, password)
            .map_err(|e| malformed("encrypted private key PEM (or wrong password)", e))?;
        Self::from_pkey(pkey)
    }

    /// From a password-encrypted PKCS#8 DER key.
    pub fn from_der_encrypted(der: &[u8], password: &[u8]) -> Result<Self> {
        let pkey = PKey::private_key_from_pkcs8_passphrase(der, password)
            .map_err(|e| malformed("encrypted private key DER (or wrong password)", e))?;
        Self::from_pkey(pkey)
    }

    /// Wraps an OpenSSL key after checking that its type is one Moria accepts.
    pub(crate) fn from_pkey(pkey: PKey<Private>) -> Result<Self> {
        let kind = KeyKind::of(&pkey)?;
        Ok(PrivateKey { pkey, kind })
    }

    /// The key's type.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// The matching public key.
    pub fn public_key(&self) -> Result<PublicKey> {
        PublicKey::from_der(&self.pkey.public_key_to_der()?)
    }

    /// The key as unencrypted PKCS#8 PEM.
    pub fn to_pem(&self) -> Result<Vec<u8>> {
        Ok(self.pkey.private_key_to_pem_pkcs8()?)
    }

    /// The key as unencrypted PKCS#8 DER.
    pub fn to_der(&self) -> Result<Vec<u8>> {
        Ok(self.pkey.private_key_to_pkcs8()?)
    }

    /// The key as PKCS#8 PEM encrypted under `password` (PBES2, AES-256-CBC).
    pub fn to_pem_encrypted(&self, password: &[u8]) -> Result<Vec<u8>> {
        check_password(password)?;
        Ok(self
            .pkey
            .private_key_to_pem_pkcs8_passphrase(Cipher::aes_256_cbc(), password)?)
    }

    /// The key as PKCS#8 DER encrypted under `password` (PBES2, AES-256-CBC).
    pub fn to_der_encrypted(&self, password: &[u8]) -> Result<Vec<u8>> {
        check_password(password)?;
        Ok(self
            .pkey
            .private_key_to_pkcs8_passphrase(Cipher::aes_256_cbc(), password)?)
    }
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrivateKey")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

fn ec(curve: Nid) -> Result<PKey<Private>> {
    let group = EcGroup::from_curve_name(curve)?;
    Ok(PKey::from_ec_key(EcKey::generate(&group)?)?)
}

fn check_password(password: &[u8]) -> Result<()> {
    if password.is_empty() {
        return Err(Error::InvalidLength {
            what: "password",
            expected: "at least 1".into(),
            got: 0,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_pem_and_der() {
        for name in ["ecdsa-p256", "ecdsa-p384", "ed25519", "x25519", "rsa-2048"] {
            let key = PrivateKey::generate(name).unwrap();
            assert_eq!(key.kind().name(), name);
            let pem = PrivateKey::from_pem(&key.to_pem().unwrap()).unwrap();
            let der = PrivateKey::from_der(&key.to_der().unwrap()).unwrap();
            let public = key.public_key().unwrap().to_der().unwrap();
            assert_eq!(pem.public_key().unwrap().to_der().unwrap(), public);
            assert_eq!(der.public_key().unwrap().to_der().unwrap(), public);
        }
    }

    #[test]
    fn encrypted_pkcs8_needs_the_password() {
        let key = PrivateKey::generate("ecdsa-p256").unwrap();
        let pem = key.to_pem_encrypted(b"mellon").unwrap();
        assert!(PrivateKey::from_pem_encrypted(&pem, b"mellon").is_ok());
        assert!(matches!(
            PrivateKey::from_pem_encrypted(&pem, b"speak friend"),
            Err(Error::MalformedKey(_))
        ));
        assert!(matches!(
            PrivateKey::from_pem(&pem),
            Err(Error::MalformedKey(_))
        ));
        let der = key.to_der_encrypted(b"mellon").unwrap();
        assert!(PrivateKey::from_der_encrypted(&der, b"mellon").is_ok());
        assert!(key.to_pem_encrypted(b"").is_err());
    }

    #[test]
    fn malformed_and_weak_keys_are_refused() {
        assert!(matches!(
            PrivateKey::from_pem(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"),
            Err(Error::MalformedKey(_))
        ));
        assert!(matches!(
            PrivateKey::from_der(&[0x30, 0x03, 0x02]),
            Err(Error::MalformedKey(_))
        ));
        let weak = PKey::from_rsa(Rsa::generate(1024).unwrap()).unwrap();
        assert!(matches!(
            PrivateKey::from_der(&weak.private_key_to_pkcs8().unwrap()),
            Err(Error::WeakKey { bits: 1024, .. })
        ));
        assert!(matches!(
            PrivateKey::generate_kind(KeyKind::Rsa(1024)),
            Err(Error::WeakKey { .. })
        ));
    }
}
