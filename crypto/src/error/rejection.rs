//! [`Rejection`] (public as `pki::Rejection`): why a certificate was refused, by kind, from
//! OpenSSL's verification result.

use std::ffi::c_int;

use openssl_sys as ffi;

/// The kind of a chain validation failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rejection {
    /// A certificate of the chain is past its `notAfter`.
    Expired,
    /// A certificate of the chain is before its `notBefore`.
    NotYetValid,
    /// A certificate of the chain is on its issuer's CRL.
    Revoked,
    /// The certificate may not be used for the purpose asked (extended key usage).
    WrongPurpose,
    /// No chain to a trusted root could be built.
    UntrustedIssuer,
    /// A signature in the chain (or on a CRL) does not verify.
    BadSignature,
    /// CRL checking is on and an issuer's CRL is missing.
    CrlMissing,
    /// A CRL is past its `nextUpdate` or not yet valid.
    CrlOutdated,
    /// An issuer is not a CA, may not sign certificates, or its path length is exceeded.
    InvalidCa,
    /// Any other failure (OpenSSL's code).
    Other(i32),
}

impl Rejection {
    /// The kind of OpenSSL's verification error code `code` (`X509_V_ERR_*`).
    pub(crate) fn from_code(code: c_int) -> Self {
        match code {
            ffi::X509_V_ERR_CERT_HAS_EXPIRED => Rejection::Expired,
            ffi::X509_V_ERR_CERT_NOT_YET_VALID => Rejection::NotYetValid,
            ffi::X509_V_ERR_CERT_REVOKED => Rejection::Revoked,
            ffi::X509_V_ERR_INVALID_PURPOSE => Rejection::WrongPurpose,
            ffi::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT
            | ffi::X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
            | ffi::X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE
            | ffi::X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
            | ffi::X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN
            | ffi::X509_V_ERR_CERT_UNTRUSTED => Rejection::UntrustedIssuer,
            ffi::X509_V_ERR_CERT_SIGNATURE_FAILURE
            | ffi::X509_V_ERR_CRL_SIGNATURE_FAILURE
            | ffi::X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE
            | ffi::X509_V_ERR_UNABLE_TO_DECRYPT_CRL_SIGNATURE => Rejection::BadSignature,
            ffi::X509_V_ERR_UNABLE_TO_GET_CRL => Rejection::CrlMissing,
            ffi::X509_V_ERR_CRL_HAS_EXPIRED | ffi::X509_V_ERR_CRL_NOT_YET_VALID => {
                Rejection::CrlOutdated
            }
            ffi::X509_V_ERR_INVALID_CA
            | ffi::X509_V_ERR_INVALID_NON_CA
            | ffi::X509_V_ERR_KEYUSAGE_NO_CERTSIGN
            | ffi::X509_V_ERR_PATH_LENGTH_EXCEEDED => Rejection::InvalidCa,
            other => Rejection::Other(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_kinds() {
        let kind = Rejection::from_code;
        assert_eq!(kind(ffi::X509_V_ERR_CERT_HAS_EXPIRED), Rejection::Expired);
        assert_eq!(kind(ffi::X509_V_ERR_CERT_REVOKED), Rejection::Revoked);
        assert_eq!(
            kind(ffi::X509_V_ERR_INVALID_PURPOSE),
            Rejection::WrongPurpose
        );
        assert_eq!(kind(9999), Rejection::Other(9999));
    }
}
