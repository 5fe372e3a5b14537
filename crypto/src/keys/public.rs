//! [`PublicKey`]: import and export SubjectPublicKeyInfo PEM/DER.

use std::fmt;

use openssl::pkey::{PKey, Public};

use super::kind::KeyKind;
use super::malformed;
use crate::error::Result;

/// A public key of a [`KeyKind`]. Cheap to clone (reference-counted by OpenSSL).
#[derive(Clone)]
pub struct PublicKey {
    pub(crate) pkey: PKey<Public>,
    kind: KeyKind,
}

impl PublicKey {
    /// From a SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`).
    pub fn from_pem(pem: &[u8]) -> Result<Self> {
        let pkey = PKey::public_key_from_pem(pem).map_err(|e| malformed("public key PEM", e))?;
        Self::from_pkey(pkey)
    }

    /// From a SubjectPublicKeyInfo DER.
    pub fn from_der(der: &[u8]) -> Result<Self> {
        let pkey = PKey::public_key_from_der(der).map_err(|e| malformed("public key DER", e))?;
        Self::from_pkey(pkey)
    }

    /// Wraps an OpenSSL key after checking that its type is one Moria accepts.
    pub(crate) fn from_pkey(pkey: PKey<Public>) -> Result<Self> {
        let kind = KeyKind::of(&pkey)?;
        Ok(PublicKey { pkey, kind })
    }

    /// The key's type.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// The key as SubjectPublicKeyInfo PEM.
    pub fn to_pem(&self) -> Result<Vec<u8>> {
        Ok(self.pkey.public_key_to_pem()?)
    }

    /// The key as SubjectPublicKeyInfo DER.
    pub fn to_der(&self) -> Result<Vec<u8>> {
        Ok(self.pkey.public_key_to_der()?)
    }
}

impl PartialEq for PublicKey {
    fn eq(&self, other: &Self) -> bool {
        self.pkey.public_eq(&other.pkey)
    }
}

impl Eq for PublicKey {}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublicKey")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::keys::PrivateKey;

    #[test]
    fn round_trip_and_garbage() {
        let public = PrivateKey::generate("ed25519")
            .unwrap()
            .public_key()
            .unwrap();
        assert_eq!(
            PublicKey::from_pem(&public.to_pem().unwrap()).unwrap(),
            public
        );
        assert!(matches!(
            PublicKey::from_pem(b"junk"),
            Err(Error::MalformedKey(_))
        ));
        assert!(matches!(
            PublicKey::from_der(b"junk"),
            Err(Error::MalformedKey(_))
        ));
    }
}
