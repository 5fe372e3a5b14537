//! Key types by name: `rsa-2048`, `rsa-3072`, `rsa-4096`, `ecdsa-p256`, `ecdsa-p384`,
//! `ed25519`, `x25519`; and the type of any key OpenSSL hands us.

use std::fmt;

use openssl::nid::Nid;
use openssl::pkey::{HasPublic, Id, PKeyRef};

use crate::error::{Error, Result};
use crate::lookup::lookup;

/// Smallest RSA modulus accepted, generated or imported (NIST SP 800-131A: 112-bit security).
pub const MIN_RSA_BITS: u32 = 2048;
/// Largest RSA modulus accepted on import (bounds the cost of one operation).
pub const MAX_RSA_BITS: u32 = 16384;

/// The type of an asymmetric key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// RSA with a modulus of this many bits (generated: 2048, 3072 or 4096).
    Rsa(u32),
    /// ECDSA on NIST P-256.
    EcdsaP256,
    /// ECDSA on NIST P-384.
    EcdsaP384,
    /// Ed25519 signatures (RFC 8032).
    Ed25519,
    /// X25519 key agreement (RFC 7748).
    X25519,
}

/// The key types [`PrivateKey::generate`](super::PrivateKey::generate) makes, by name.
const GENERATED: [(&str, KeyKind); 7] = [
    ("rsa-2048", KeyKind::Rsa(2048)),
    ("rsa-3072", KeyKind::Rsa(3072)),
    ("rsa-4096", KeyKind::Rsa(4096)),
    ("ecdsa-p256", KeyKind::EcdsaP256),
    ("ecdsa-p384", KeyKind::EcdsaP384),
    ("ed25519", KeyKind::Ed25519),
    ("x25519", KeyKind::X25519),
];

impl KeyKind {
    /// The key type called `name`; `rsa-1024` and other small sizes are refused with the
    /// minimum, other unknown names list the valid ones.
    pub fn from_name(name: &str) -> Result<Self> {
        if let Some(bits) = name
            .strip_prefix("rsa-")
            .and_then(|b| b.parse::<u32>().ok())
        {
            check_rsa_bits(bits)?;
        }
        lookup("key", &GENERATED, name)
    }

    /// Every name [`KeyKind::from_name`] knows.
    pub fn names() -> Vec<&'static str> {
        GENERATED.iter().map(|&(name, _)| name).collect()
    }

    /// The catalogue name (`rsa-2048`, `ecdsa-p256`); an imported RSA key of another size
    /// is `rsa`.
    pub fn name(self) -> &'static str {
        GENERATED
            .iter()
            .find(|&&(_, kind)| kind == self)
            .map_or("rsa", |&(name, _)| name)
    }

    /// The type of `key`, or why it is not one Moria accepts.
    pub(crate) fn of<T: HasPublic>(key: &PKeyRef<T>) -> Result<Self> {
        match key.id() {
            Id::RSA => {
                let bits = key.bits();
                check_rsa_bits(bits)?;
                Ok(KeyKind::Rsa(bits))
            }
            Id::EC => match key.ec_key()?.group().curve_name() {
                Some(Nid::X9_62_PRIME256V1) => Ok(KeyKind::EcdsaP256),
                Some(Nid::SECP384R1) => Ok(KeyKind::EcdsaP384),
                _ => Err(Error::MalformedKey(
                    "unsupported EC curve (P-256 and P-384 are accepted)".into(),
                )),
            },
            Id::ED25519 => Ok(KeyKind::Ed25519),
            Id::X25519 => Ok(KeyKind::X25519),
            other => Err(Error::MalformedKey(format!(
                "unsupported key type (OpenSSL id {})",
                other.as_raw()
            ))),
        }
    }
}

impl fmt::Display for KeyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyKind::Rsa(bits) => write!(f, "rsa-{bits}"),
            other => f.write_str(other.name()),
        }
    }
}

/// Refuses RSA moduli below [`MIN_RSA_BITS`] or above [`MAX_RSA_BITS`].
fn check_rsa_bits(bits: u32) -> Result<()> {
    if bits < MIN_RSA_BITS {
        return Err(Error::WeakKey {
            what: "RSA key",
            bits,
            min: MIN_RSA_BITS,
        });
    }
    if bits > MAX_RSA_BITS {
        return Err(Error::MalformedKey(format!(
            "RSA key of {bits} bits is larger than the {MAX_RSA_BITS}-bit limit"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in KeyKind::names() {
            assert_eq!(KeyKind::from_name(name).unwrap().name(), name);
        }
        assert_eq!(KeyKind::Rsa(2048).to_string(), "rsa-2048");
        assert_eq!(KeyKind::Rsa(2304).to_string(), "rsa-2304");
    }

    #[test]
    fn small_rsa_is_refused_with_a_reason() {
        let err = KeyKind::from_name("rsa-1024").unwrap_err();
        assert!(matches!(
            err,
            Error::WeakKey {
                bits: 1024,
                min: 2048,
                ..
            }
        ));
        assert!(err.to_string().contains("at least 2048"));
        assert!(matches!(
            KeyKind::from_name("rsa-2049"),
            Err(Error::UnknownAlgorithm { .. })
        ));
        assert!(matches!(
            KeyKind::from_name("dsa-2048"),
            Err(Error::UnknownAlgorithm { .. })
        ));
    }
}
