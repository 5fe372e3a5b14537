//! Certificate authorities for tests: a root, an intermediate, and leaves issued by either.

use moria_crypto::keys::PrivateKey;
use moria_crypto::x509::{CertBuilder, Certificate, Usage};

/// A CA certificate with its key.
pub struct Ca {
    pub cert: Certificate,
    pub key: PrivateKey,
}

impl Ca {
    /// A self-signed root CA called `name` with a P-256 key and no path length limit.
    pub fn root(name: &str) -> Self {
        Self::root_from(
            CertBuilder::new(name).usage(Usage::Ca { path_len: None }),
            "ecdsa-p256",
        )
    }

    /// A self-signed root CA from `builder` (which states the CA usage) with a `key_name` key.
    pub fn root_from(builder: CertBuilder, key_name: &str) -> Self {
        let key = PrivateKey::generate(key_name).unwrap();
        let cert = builder.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// An intermediate CA below this one, with a `key_name` key.
    pub fn intermediate(&self, name: &str, key_name: &str) -> Self {
        let (cert, key) = self.issue_with(
            CertBuilder::new(name).usage(Usage::Ca { path_len: Some(0) }),
            key_name,
        );
        Ca { cert, key }
    }

    /// A certificate from `builder` for a fresh P-256 key, with that key.
    pub fn issue(&self, builder: CertBuilder) -> (Certificate, PrivateKey) {
        self.issue_with(builder, "ecdsa-p256")
    }

    /// A certificate from `builder` for a fresh `key_name` key, with that key.
    pub fn issue_with(&self, builder: CertBuilder, key_name: &str) -> (Certificate, PrivateKey) {
        let key = PrivateKey::generate(key_name).unwrap();
        let cert = builder
            .public_key(key.public_key().unwrap())
            .issue(&self.cert, &self.key)
            .unwrap();
        (cert, key)
    }
}
