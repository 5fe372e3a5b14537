//! What a certificate is verified for.

use openssl::x509::X509PurposeId;

/// The use a certificate is verified for (its extended key usage, and its CAs').
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// A TLS server certificate.
    TlsServer,
    /// A TLS client certificate.
    TlsClient,
    /// A code signing certificate (OpenSSL 3.0 has no such purpose: the chain is validated
    /// for any purpose, then the leaf must list `codeSigning`).
    CodeSigning,
    /// Any purpose: chain, validity and revocation only.
    Any,
}

impl Purpose {
    /// Every purpose, in the order of the stores a [`Pki`](super::Pki) keeps.
    pub(crate) const ALL: [Purpose; 4] = [
        Purpose::TlsServer,
        Purpose::TlsClient,
        Purpose::CodeSigning,
        Purpose::Any,
    ];

    /// The OpenSSL purpose the chain is validated for.
    pub(crate) fn openssl(self) -> X509PurposeId {
        match self {
            Purpose::TlsServer => X509PurposeId::SSL_SERVER,
            Purpose::TlsClient => X509PurposeId::SSL_CLIENT,
            Purpose::CodeSigning | Purpose::Any => X509PurposeId::ANY,
        }
    }
}
