//! HTTPS test servers and clients: a self-signed certificate for `localhost` and a client that
//! trusts exactly that certificate.

use std::net::{SocketAddr, TcpStream};

use moria_crypto::{TlsAcceptor, TlsConnector, TlsStream};
use moria_http::{Handler, Server, ServerBuilder};

use super::{connect, TEST_GRACE};

/// A running HTTPS server and the certificate its clients must trust.
pub struct TlsServer {
    pub server: Server,
    pub pem: Vec<u8>,
}

/// A self-signed acceptor for `localhost` and `127.0.0.1`, with its certificate.
pub fn acceptor() -> (TlsAcceptor, Vec<u8>) {
    let acceptor = TlsAcceptor::self_signed(&["localhost", "127.0.0.1"]).expect("self-signed");
    let pem = acceptor.certificate_pem().expect("certificate");
    (acceptor, pem)
}

/// Starts `handler` on one HTTPS listener on an ephemeral port, with [`TEST_GRACE`].
pub fn start_tls(builder: ServerBuilder, handler: impl Handler) -> TlsServer {
    let (acceptor, pem) = acceptor();
    let server = builder
        .listen_tls("127.0.0.1:0", acceptor)
        .shutdown_grace(TEST_GRACE)
        .start(handler)
        .expect("server starts");
    TlsServer { server, pem }
}

/// A TLS client connection to `addr` that trusts `pem` (read timeout as for [`connect`]).
pub fn connect_tls(addr: SocketAddr, pem: &[u8]) -> TlsStream<TcpStream> {
    let connector = TlsConnector::builder()
        .add_root_certificate_pem(pem)
        .build()
        .expect("connector");
    connector
        .connect("localhost", connect(addr))
        .expect("TLS handshake")
}
