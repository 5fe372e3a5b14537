//! Our connector against our acceptor over loopback TCP on plain threads: echo, ALPN, SNI,
//! resumption, verification failures, timeouts, close_notify and truncation.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::common::pattern;
use crate::common::tls::{echo_server, expired_identity, round_trip, trusting};
use moria_crypto::{Error, Identity, TlsAcceptor, TlsConnector};

#[test]
fn tls_types_move_between_fibers() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<TlsAcceptor>();
    send_sync::<TlsConnector>();
    send::<moria_crypto::TlsStream<moria_runtime::net::TcpStream>>();
    send::<moria_crypto::Aead>();
    send::<moria_crypto::Hmac>();
    send::<moria_crypto::Hasher>();
}

#[test]
fn echo_with_alpn_and_server_name() {
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let pem = identity.certificate_pem().unwrap();
    let acceptor = TlsAcceptor::builder(identity)
        .alpn(&["h2", "http/1.1"])
        .build()
        .unwrap();
    let (addr, server) = echo_server(acceptor, 1);
    let connector = TlsConnector::builder()
        .add_root_certificate_pem(&pem)
        .alpn(&["http/1.1"])
        .build()
        .unwrap();
    let mut tls = connector
        .connect("localhost", TcpStream::connect(addr).unwrap())
        .unwrap();
    assert_eq!(tls.alpn_protocol(), Some(&b"http/1.1"[..]));
    assert_eq!(tls.version(), "TLSv1.3");
    let payload = pattern(1 << 20, 1);
    assert_eq!(round_trip(&mut tls, &payload), payload);

    let seen = server.join().unwrap().pop().unwrap().unwrap();
    assert_eq!(seen.server_name.as_deref(), Some("localhost"));
    assert_eq!(seen.alpn.as_deref(), Some(&b"http/1.1"[..]));
    assert_eq!(seen.echoed, 1 << 20);
}

#[test]
fn sni_picks_the_matching_certificate() {
    let default = Identity::self_signed(&["default.test"]).unwrap();
    let other = Identity::self_signed(&["other.test"]).unwrap();
    let mut roots = default.certificate_pem().unwrap();
    roots.extend(other.certificate_pem().unwrap());
    let acceptor = TlsAcceptor::builder(default)
        .sni("Other.Test", other)
        .build()
        .unwrap();
    let (addr, server) = echo_server(acceptor, 2);
    let connector = trusting(&roots);
    for host in ["other.test", "default.test"] {
        let mut tls = connector
            .connect(host, TcpStream::connect(addr).unwrap())
            .unwrap_or_else(|e| panic!("{host}: {e}"));
        assert_eq!(round_trip(&mut tls, host.as_bytes()), host.as_bytes());
    }
    for seen in server.join().unwrap() {
        seen.unwrap();
    }
}

#[test]
fn second_connection_resumes_the_session() {
    let acceptor = TlsAcceptor::self_signed(&["localhost"]).unwrap();
    let connector = trusting(&acceptor.certificate_pem().unwrap());
    let (addr, server) = echo_server(acceptor, 2);
    let mut reused = Vec::new();
    for _ in 0..2 {
        let mut tls = connector
            .connect("localhost", TcpStream::connect(addr).unwrap())
            .unwrap();
        round_trip(&mut tls, b"ticket please");
        reused.push(tls.session_reused());
    }
    assert_eq!(reused, [false, true]);
    let server_side: Vec<bool> = server
        .join()
        .unwrap()
        .into_iter()
        .map(|s| s.unwrap().reused)
        .collect();
    assert_eq!(server_side, [false, true]);
}

/// Connects with `connector` to a server presenting `identity`; returns the client's error.
fn client_error(identity: Identity, connector: &TlsConnector, host: &str) -> Error {
    let acceptor = TlsAcceptor::builder(identity).build().unwrap();
    let (addr, server) = echo_server(acceptor, 1);
    let err = connector
        .connect(host, TcpStream::connect(addr).unwrap())
        .unwrap_err();
    let server_result = server.join().unwrap().pop().unwrap();
    assert!(
        server_result.is_err(),
        "the server must see the failure too"
    );
    err
}

fn assert_verification(err: Error, reason: &str) {
    match err {
        Error::CertificateVerification(msg) => assert!(msg.contains(reason), "{msg}"),
        other => panic!("expected CertificateVerification({reason}), got {other:?}"),
    }
}

#[test]
fn wrong_host_is_rejected() {
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let connector = trusting(&identity.certificate_pem().unwrap());
    assert_verification(
        client_error(identity, &connector, "evil.test"),
        "hostname mismatch",
    );
}

#[test]
fn unknown_ca_is_rejected() {
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let connector = TlsConnector::new().unwrap();
    assert_verification(
        client_error(identity, &connector, "localhost"),
        "self-signed certificate",
    );
}

#[test]
fn expired_certificate_is_rejected() {
    let identity = expired_identity("localhost");
    let connector = trusting(&identity.certificate_pem().unwrap());
    assert_verification(
        client_error(identity, &connector, "localhost"),
        "certificate has expired",
    );
}

#[test]
fn insecure_opt_out_accepts_anything() {
    let acceptor = TlsAcceptor::self_signed(&["localhost"]).unwrap();
    let (addr, server) = echo_server(acceptor, 1);
    let connector = TlsConnector::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let mut tls = connector
        .connect("evil.test", TcpStream::connect(addr).unwrap())
        .unwrap();
    assert_eq!(round_trip(&mut tls, b"ok"), b"ok");
    server.join().unwrap().pop().unwrap().unwrap();
}

#[test]
fn silent_client_hits_the_server_handshake_timeout() {
    let acceptor = TlsAcceptor::builder(Identity::self_signed(&["localhost"]).unwrap())
        .handshake_timeout(Some(Duration::from_millis(200)))
        .build()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    // The silent client holds its socket until the server is done (or gives up after 30 s,
    // which turns a missing timeout into a test failure instead of a hang).
    let client = thread::spawn(move || {
        let sock = TcpStream::connect(addr).unwrap();
        let _ = done_rx.recv_timeout(Duration::from_secs(30));
        drop(sock);
    });
    let (sock, _) = listener.accept().unwrap();
    let err = acceptor.accept(sock).unwrap_err();
    done_tx.send(()).unwrap();
    client.join().unwrap();
    match err {
        Error::Io(e) => assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}"),
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[test]
fn silent_server_hits_the_client_handshake_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let server = thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        let _ = done_rx.recv_timeout(Duration::from_secs(30));
        drop(sock);
    });
    let connector = TlsConnector::builder()
        .handshake_timeout(Some(Duration::from_millis(200)))
        .build()
        .unwrap();
    let err = connector
        .connect("localhost", TcpStream::connect(addr).unwrap())
        .unwrap_err();
    done_tx.send(()).unwrap();
    server.join().unwrap();
    assert!(
        matches!(&err, Error::Io(e) if e.kind() == io::ErrorKind::TimedOut),
        "{err:?}"
    );
}

#[test]
fn close_notify_is_a_clean_end_and_truncation_is_an_error() {
    let acceptor = TlsAcceptor::self_signed(&["localhost"]).unwrap();
    let connector = trusting(&acceptor.certificate_pem().unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let client = thread::spawn(move || {
        let mut clean = connector
            .connect("localhost", TcpStream::connect(addr).unwrap())
            .unwrap();
        clean.write_all(b"bye").unwrap();
        clean.shutdown().unwrap();
        let mut cut = connector
            .connect("localhost", TcpStream::connect(addr).unwrap())
            .unwrap();
        cut.write_all(b"cut").unwrap();
        // Closing the socket without close_notify.
        cut.get_ref().shutdown(std::net::Shutdown::Both).unwrap();
    });
    let mut results = Vec::new();
    for _ in 0..2 {
        let (sock, _) = listener.accept().unwrap();
        let mut tls = acceptor.accept(sock).unwrap();
        let mut got = Vec::new();
        results.push((tls.read_to_end(&mut got), got));
    }
    client.join().unwrap();
    let (clean, clean_data) = &results[0];
    assert_eq!(clean.as_ref().unwrap(), &3);
    assert_eq!(clean_data, b"bye");
    let (cut, cut_data) = &results[1];
    assert_eq!(cut_data, b"cut");
    assert_eq!(
        cut.as_ref().unwrap_err().kind(),
        io::ErrorKind::UnexpectedEof
    );
}

#[test]
fn garbage_instead_of_a_client_hello_fails_cleanly() {
    let acceptor = TlsAcceptor::self_signed(&["localhost"]).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let client = thread::spawn(move || {
        let mut sock = TcpStream::connect(addr).unwrap();
        sock.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut answer = Vec::new();
        let _ = sock.read_to_end(&mut answer);
    });
    let (sock, _) = listener.accept().unwrap();
    let err = acceptor.accept(sock).unwrap_err();
    client.join().unwrap();
    assert!(matches!(err, Error::Handshake(_)), "{err:?}");
}

#[test]
fn transport_timeouts_survive_the_handshake() {
    let acceptor = TlsAcceptor::self_signed(&["localhost"]).unwrap();
    let connector = trusting(&acceptor.certificate_pem().unwrap());
    let (addr, server) = echo_server(acceptor, 1);
    let sock = TcpStream::connect(addr).unwrap();
    let own = Some(Duration::from_secs(7));
    sock.set_read_timeout(own).unwrap();
    let mut tls = connector.connect("localhost", sock).unwrap();
    assert_eq!(tls.get_ref().read_timeout().unwrap(), own);
    assert_eq!(tls.get_ref().write_timeout().unwrap(), None);
    round_trip(&mut tls, b"x");
    server.join().unwrap().pop().unwrap().unwrap();
}

/// Bytes OpenSSL already holds are read without touching the socket: small reads drain a
/// record while the peer sends nothing more, and reads after close_notify return end of stream
/// at once while the peer keeps the connection open (a read that waited on the socket first
/// would time out here).
#[test]
fn small_reads_and_reads_after_close_notify_never_wait_on_the_socket() {
    let acceptor = TlsAcceptor::self_signed(&["localhost"]).unwrap();
    let connector = trusting(&acceptor.certificate_pem().unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (step_tx, step_rx) = mpsc::channel::<()>();
    let server = thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        let mut tls = acceptor.accept(sock).unwrap();
        tls.write_all(&pattern(1000, 7)).unwrap();
        // Nothing more until the client has read every byte, then close_notify, and the
        // connection stays open until the client has seen the end.
        step_rx.recv().unwrap();
        tls.shutdown().unwrap();
        step_rx.recv().unwrap();
    });
    let sock = TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut tls = connector.connect("localhost", sock).unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 10];
    while got.len() < 1000 {
        let n = tls.read(&mut chunk).unwrap();
        assert!(n > 0, "end of stream after {} bytes", got.len());
        got.extend_from_slice(&chunk[..n]);
    }
    assert_eq!(got, pattern(1000, 7));
    step_tx.send(()).unwrap();
    for _ in 0..3 {
        assert_eq!(tls.read(&mut chunk).unwrap(), 0);
    }
    step_tx.send(()).unwrap();
    server.join().unwrap();
}
