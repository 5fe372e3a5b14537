//! [`HandshakeOutcome`]: what a TLS handshake established (version, suite, SNI, ALPN,
//! resumption, the peer's certificate), kept as plain values once OpenSSL's session is freed.

use openssl::ssl::{NameType, SslRef};
use openssl::x509::X509;

/// What the handshake established, for the stream's accessors.
#[derive(Debug)]
pub(crate) struct HandshakeOutcome {
    pub(crate) version: &'static str,
    pub(crate) cipher: Option<&'static str>,
    pub(crate) server_name: Option<Box<str>>,
    pub(crate) alpn: Option<Box<[u8]>>,
    pub(crate) resumed: bool,
    pub(crate) peer_certificate: Option<X509>,
}

impl HandshakeOutcome {
    /// What the handshake of `ssl` established.
    pub(crate) fn of(ssl: &SslRef) -> HandshakeOutcome {
        HandshakeOutcome {
            version: ssl.version_str(),
            cipher: ssl.current_cipher().map(|c| c.name()),
            server_name: ssl.servername(NameType::HOST_NAME).map(Box::from),
            alpn: ssl.selected_alpn_protocol().map(Box::from),
            resumed: ssl.session_reused(),
            peer_certificate: ssl.peer_certificate(),
        }
    }
}
