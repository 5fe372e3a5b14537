//! Helpers for the TLS tests: echo servers on loopback threads, a fiber server's setup,
//! connectors trusting one certificate, round trips, expired certificates.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread::{self, JoinHandle};

use moria_crypto::{Identity, TlsAcceptor, TlsConnector, TlsStream};
use openssl::asn1::Asn1Time;
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::PKey;
use openssl::x509::extension::SubjectAlternativeName;
use openssl::x509::{X509Builder, X509NameBuilder};

/// Echoes everything until end of stream, then answers the peer's close_notify with its own.
pub fn echo(tls: &mut TlsStream<TcpStream>) -> io::Result<u64> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0;
    loop {
        let n = tls.read(&mut buf)?;
        if n == 0 {
            tls.shutdown()?;
            return Ok(total);
        }
        tls.write_all(&buf[..n])?;
        total += n as u64;
    }
}

/// What a server thread saw on one connection.
#[derive(Debug)]
pub struct Seen {
    pub server_name: Option<String>,
    pub alpn: Option<Vec<u8>>,
    pub reused: bool,
    pub echoed: u64,
}

/// Serves `connections` TLS echo connections, one thread each; returns what each one saw.
pub fn echo_server(
    acceptor: TlsAcceptor,
    connections: usize,
) -> (SocketAddr, JoinHandle<Vec<moria_crypto::Result<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = thread::spawn(move || {
        let workers: Vec<_> = (0..connections)
            .map(|_| {
                let (sock, _) = listener.accept().unwrap();
                let acceptor = acceptor.clone();
                thread::spawn(move || {
                    let mut tls = acceptor.accept(sock)?;
                    let echoed = echo(&mut tls)?;
                    Ok(Seen {
                        server_name: tls.server_name().map(str::to_owned),
                        alpn: tls.alpn_protocol().map(<[u8]>::to_vec),
                        reused: tls.session_reused(),
                        echoed,
                    })
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    (addr, handle)
}

/// A self-signed acceptor for `localhost`, a connector trusting it, and a runtime listener on
/// 127.0.0.1:0 with its address (for tests whose server runs in fibers).
pub fn fiber_tls_setup() -> (
    TlsAcceptor,
    TlsConnector,
    moria_runtime::net::TcpListener,
    SocketAddr,
) {
    let acceptor = TlsAcceptor::builder(Identity::self_signed(&["localhost"]).unwrap())
        .build()
        .unwrap();
    let connector = trusting(&acceptor.certificate_pem().unwrap());
    let listener = moria_runtime::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    (acceptor, connector, listener, addr)
}

/// A connector that trusts exactly the system roots plus `pem`.
pub fn trusting(pem: &[u8]) -> TlsConnector {
    TlsConnector::builder()
        .add_root_certificate_pem(pem)
        .build()
        .unwrap()
}

/// Sends `payload` in 16 KiB pieces, reading each echo back before the next (so neither side
/// ever waits on a full socket buffer), then exchanges close_notify.
pub fn round_trip(tls: &mut TlsStream<TcpStream>, payload: &[u8]) -> Vec<u8> {
    let mut back = vec![0u8; payload.len()];
    for (piece, echo) in payload.chunks(16 * 1024).zip(back.chunks_mut(16 * 1024)) {
        tls.write_all(piece).unwrap();
        tls.read_exact(echo).unwrap();
    }
    tls.shutdown().unwrap();
    let mut rest = Vec::new();
    tls.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    back
}

/// A self-signed certificate for `host` that expired yesterday.
pub fn expired_identity(host: &str) -> Identity {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
    let key = PKey::from_ec_key(EcKey::generate(&group).unwrap()).unwrap();
    let mut name = X509NameBuilder::new().unwrap();
    name.append_entry_by_nid(Nid::COMMONNAME, host).unwrap();
    let name = name.build();
    let mut b = X509Builder::new().unwrap();
    b.set_version(2).unwrap();
    b.set_subject_name(&name).unwrap();
    b.set_issuer_name(&name).unwrap();
    b.set_pubkey(&key).unwrap();
    let day = 24 * 3600;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    b.set_not_before(&Asn1Time::from_unix(now - 30 * day).unwrap())
        .unwrap();
    b.set_not_after(&Asn1Time::from_unix(now - day).unwrap())
        .unwrap();
    let san = SubjectAlternativeName::new()
        .dns(host)
        .build(&b.x509v3_context(None, None))
        .unwrap();
    b.append_extension(san).unwrap();
    b.sign(&key, MessageDigest::sha256()).unwrap();
    let cert = b.build();
    Identity::from_pem(
        &cert.to_pem().unwrap(),
        &key.private_key_to_pem_pkcs8().unwrap(),
    )
    .unwrap()
}
