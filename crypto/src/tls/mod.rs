//! TLS streams over any `Read + Write` transport: [`TlsAcceptor`], [`TlsConnector`],
//! [`TlsStream`], and its [`TlsReader`]/[`TlsWriter`] halves for full duplex over TCP. See the crate docs for how they stay correct inside migrating fibers.
//!
//! ```no_run
//! use std::io::{Read, Write};
//! use moria_crypto::{TlsAcceptor, TlsConnector};
//! use moria_runtime::net::{TcpListener, TcpStream};
//!
//! // Server: a development certificate, then one TLS session per accepted socket.
//! let acceptor = TlsAcceptor::builder(moria_crypto::Identity::self_signed(&["localhost"])?)
//!     .alpn(&["http/1.1"])
//!     .build()?;
//! let mut listener = TcpListener::bind("127.0.0.1:8443")?;
//! let (sock, _) = listener.accept()?;
//! let mut tls = acceptor.accept(sock)?;
//! let mut request = [0u8; 1024];
//! let n = tls.read(&mut request)?;
//! tls.write_all(&request[..n])?;
//! tls.shutdown()?;
//!
//! // Client: system roots plus the development certificate; verifies "localhost".
//! let connector = TlsConnector::builder()
//!     .add_root_certificate_pem(&acceptor.certificate_pem()?)
//!     .build()?;
//! let mut tls = connector.connect("localhost", TcpStream::connect("127.0.0.1:8443")?)?;
//! tls.write_all(b"hello")?;
//! # Ok::<(), moria_crypto::Error>(())
//! ```

mod acceptor;
mod connector;
mod handoff;
mod handshake_outcome;
mod identity;
mod idle_share;
mod memio;
mod moria_session;
mod openssl_session;
mod record;
mod session;
mod split;
mod stop;
mod stream;
mod ticket_keys;
mod timeouts;

pub use acceptor::{TlsAcceptor, TlsAcceptorBuilder};
pub use connector::{TlsConnector, TlsConnectorBuilder, MAX_CACHED_SESSIONS};
pub use identity::{Identity, SELF_SIGNED_DAYS};
pub use split::{TlsReader, TlsWriter};
pub use stream::{TlsStream, MAX_WRITE_CHUNK};
pub use ticket_keys::{
    TicketKeys, DEFAULT_TICKET_KEYS_KEPT, DEFAULT_TICKET_ROTATION, MAX_TICKET_KEYS_KEPT,
};
pub use timeouts::SocketTimeouts;

pub(crate) use record::wipe;

use std::time::Duration;

use crate::error::{Error, Result};

/// Handshake time limit unless the builder says otherwise.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// TLS 1.2 suites offered by the connector: forward-secret AEAD only (TLS 1.3 suites are
/// OpenSSL's defaults, all AEAD).
const TLS12_CIPHERS: &str = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:\
ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:\
ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

/// ALPN protocol names in wire format (each prefixed by its length).
fn alpn_wire(protocols: &[String]) -> Result<Vec<u8>> {
    let mut wire = Vec::new();
    for p in protocols {
        let len = u8::try_from(p.len())
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| Error::InvalidLength {
                what: "ALPN protocol name",
                expected: "1 to 255".into(),
                got: p.len(),
            })?;
        wire.push(len);
        wire.extend_from_slice(p.as_bytes());
    }
    Ok(wire)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpn_wire_format() {
        let wire = alpn_wire(&["h2".into(), "http/1.1".into()]).unwrap();
        assert_eq!(wire, b"\x02h2\x08http/1.1");
        assert!(alpn_wire(&[String::new()]).is_err());
        assert!(alpn_wire(&["x".repeat(256)]).is_err());
    }
}
