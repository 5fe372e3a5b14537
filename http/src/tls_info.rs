//! What a handler can learn about the TLS session its request came over.

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
}
