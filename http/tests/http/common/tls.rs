//! HTTPS test servers and clients: a self-signed certificate for `localhost` and a client that
//! trusts exactly that certificate.

use std::net::{SocketAddr, TcpStream};

use moria_crypto::{TlsAcceptor, TlsConnector, TlsStream};
use moria_http::{Handler, Server, ServerBuilder};

use super::{connect, ClientConn, TEST_GRACE};

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

/// A server reached over plain TCP or over TLS, for tests that run once per transport.
pub struct Fixture {
    pub server: Server,
    /// The certificate to trust; `None` for plain TCP.
    pub pem: Option<Vec<u8>>,
}

impl Fixture {
    /// Starts `handler` with `builder`'s settings on a plain (`tls == false`) or HTTPS listener.
    pub fn start(tls: bool, builder: ServerBuilder, handler: impl Handler) -> Fixture {
        match tls {
            false => Fixture {
                server: super::start(builder, handler),
                pem: None,
            },
            true => {
                let t = start_tls(builder, handler);
                Fixture {
                    server: t.server,
                    pem: Some(t.pem),
                }
            }
        }
    }

    /// Whether this fixture speaks TLS.
    pub fn is_tls(&self) -> bool {
        self.pem.is_some()
    }

    /// A new client connection of the fixture's kind.
    pub fn connect(&self) -> Box<dyn ClientConn> {
        let addr = self.server.local_addr();
        match &self.pem {
            None => Box::new(connect(addr)),
            Some(pem) => Box::new(connect_tls(addr, pem)),
        }
    }
}
