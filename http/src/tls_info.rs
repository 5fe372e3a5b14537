//! What a handler can learn about the TLS session its request came over.

use moria_crypto::x509::Certificate;

/// The negotiated TLS session of an HTTPS connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsInfo {
    /// Protocol version, e.g. `TLSv1.3`.
    pub version: String,
    /// Cipher suite name.
    pub cipher: String,
    /// Server name the client asked for (SNI).
    pub server_name: Option<String>,
    /// Application protocol negotiated through ALPN.
    pub alpn: Option<Vec<u8>>,
    /// The client's certificate, verified, when the acceptor requires one
    /// (`TlsAcceptorBuilder::client_auth`).
    pub peer_certificate: Option<Certificate>,
}
