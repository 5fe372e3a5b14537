//! The crate's one error type, and [`Rejection`], why a certificate was refused (a kind the
//! error carries and `pki` produces, kept here so that `pki` and the error do not import each
//! other).

mod rejection;

pub use rejection::Rejection;

use std::io;

/// Result alias for moria-crypto operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in moria-crypto.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An algorithm name that the catalogue does not know.
    #[error("unknown {kind} algorithm {name:?}; valid names: {}", valid.join(", "))]
    UnknownAlgorithm {
        /// Which part of the catalogue was asked (`hash`, `aead`, ...).
        kind: &'static str,
        /// The name that was asked for.
        name: String,
        /// Every name that part of the catalogue knows.
        valid: Vec<&'static str>,
    },
    /// A key, nonce, IV or tag of the wrong size.
    #[error("{what} must be {expected} bytes, got {got}")]
    InvalidLength {
        /// What had the wrong size (`key`, `nonce`, ...).
        what: &'static str,
        /// The size the algorithm needs, in words (`16`, `1 to 1024`).
        expected: String,
        /// The size that was given.
        got: usize,
    },
    /// An AEAD tag did not match: the data or its associated data was altered.
    #[error("authentication failed: AEAD tag mismatch")]
    TagMismatch,
    /// A token that is not three base64url parts of JSON with a known header.
    #[error("malformed token: {0}")]
    TokenMalformed(String),
    /// A token whose signature does not verify under the key.
    #[error("token signature does not verify")]
    TokenSignature,
    /// A token whose header names another algorithm than the key's.
    #[error("token algorithm {found:?} does not match the key's {expected}")]
    TokenAlgorithm {
        /// The algorithm of the key used to verify.
        expected: &'static str,
        /// The `alg` the token's header names.
        found: String,
    },
    /// A token past its `exp` time.
    #[error("token expired at {exp} (now {now})")]
    TokenExpired {
        /// The token's `exp` claim, seconds since the Unix epoch.
        exp: u64,
        /// The verifier's clock.
        now: u64,
    },
    /// A token before its `nbf` time.
    #[error("token not valid before {nbf} (now {now})")]
    TokenNotYetValid {
        /// The token's `nbf` claim, seconds since the Unix epoch.
        nbf: u64,
        /// The verifier's clock.
        now: u64,
    },
    /// A token whose `exp` is missing while the validation requires it.
    #[error("token has no {0} claim")]
    TokenMissingClaim(&'static str),
    /// A token issued by someone else than the expected issuer.
    #[error("token issuer {found:?} is not {expected:?}")]
    TokenIssuer {
        /// The issuer the validation asks for.
        expected: String,
        /// The token's `iss` claim, if any.
        found: Option<String>,
    },
    /// A token meant for another audience.
    #[error("token audience does not include {expected:?}")]
    TokenAudience {
        /// The audience the validation asks for.
        expected: String,
    },
    /// The peer's certificate did not verify (unknown CA, wrong host, expired, ...).
    #[error("certificate verification failed: {0}")]
    CertificateVerification(String),
    /// The TLS handshake failed for another reason than certificate verification.
    #[error("TLS handshake failed: {0}")]
    Handshake(String),
    /// A PEM or DER input that could not be parsed.
    #[error("invalid {what}: {reason}")]
    InvalidInput {
        /// What was being parsed (`certificate PEM`, `private key`, ...).
        what: &'static str,
        /// OpenSSL's reason.
        reason: String,
    },
    /// A key that cannot be parsed (bad PEM/DER, wrong password, unsupported type).
    #[error("malformed key: {0}")]
    MalformedKey(String),
    /// A key too weak to accept (an RSA modulus below the minimum).
    #[error("{what} of {bits} bits refused: at least {min} bits are required")]
    WeakKey {
        /// What kind of key (`RSA key`).
        what: &'static str,
        /// The key's size.
        bits: u32,
        /// The smallest size accepted.
        min: u32,
    },
    /// A key of the wrong type for the algorithm asked for (an EC key for RS256, ...).
    #[error("a {key} key cannot be used for {alg}")]
    WrongKey {
        /// The algorithm asked for (`RS256`, `rsa-oaep`, ...).
        alg: &'static str,
        /// The key's catalogue name (`ecdsa-p256`, ...).
        key: String,
    },
    /// A signature that does not verify under the key.
    #[error("signature does not verify")]
    BadSignature,
    /// A ciphertext that does not decrypt under the key (altered, or for another key).
    #[error("decryption failed")]
    DecryptFailed,
    /// A certificate that a PKI store refused, with the reason OpenSSL's chain validation gave.
    #[error("certificate refused ({reason:?} at depth {depth}): {detail}")]
    CertificateRefused {
        /// The reason, by kind.
        reason: Rejection,
        /// OpenSSL's words for it.
        detail: String,
        /// Position in the chain of the certificate at fault (0 = the one verified).
        depth: u32,
    },
    /// A failure reported by a PKCS#11 module (HSM), or a token object that is missing.
    #[error("PKCS#11: {0}")]
    Hsm(String),
    /// Any other OpenSSL failure.
    #[error("OpenSSL: {0}")]
    OpenSsl(#[from] openssl::error::ErrorStack),
    /// An I/O failure, including handshake timeouts (`ErrorKind::TimedOut`).
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl From<Error> for io::Error {
    fn from(err: Error) -> Self {
        match err {
            Error::Io(e) => e,
            Error::TagMismatch => io::Error::new(io::ErrorKind::InvalidData, err),
            other => io::Error::other(other),
        }
    }
}

/// Checks that `got` is exactly `expected` bytes long.
pub(crate) fn check_len(what: &'static str, expected: usize, got: usize) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::InvalidLength {
            what,
            expected: expected.to_string(),
            got,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_algorithm_lists_valid_names() {
        let err = Error::UnknownAlgorithm {
            kind: "hash",
            name: "sha0".into(),
            valid: vec!["md5", "sha1"],
        };
        assert_eq!(
            err.to_string(),
            "unknown hash algorithm \"sha0\"; valid names: md5, sha1"
        );
    }

    #[test]
    fn tag_mismatch_becomes_invalid_data() {
        let io: io::Error = Error::TagMismatch.into();
        assert_eq!(io.kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn check_len_reports_both_sizes() {
        assert!(check_len("key", 16, 16).is_ok());
        let err = check_len("key", 16, 15).unwrap_err();
        assert_eq!(err.to_string(), "key must be 16 bytes, got 15");
    }
}
