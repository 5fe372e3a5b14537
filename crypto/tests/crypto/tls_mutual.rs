//! Mutual TLS: an acceptor that requires client certificates verified by a `Pki`, reached by
//! curl with `--cert` (accepted; refused without a certificate, with one from another CA,
//! an expired one and a server-only one) and by our connector presenting an identity.

use crate::common::cli;

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, SystemTime};

use crate::common::ca::Ca;
use moria_crypto::pki::Pki;
use moria_crypto::x509::{CertBuilder, Usage};
use moria_crypto::{Error, Identity, TlsAcceptor, TlsConnector};

/// What the server saw on one connection: the client's subject, or the handshake error.
type Seen = Result<String, Error>;

/// Serves `connections` HTTPS connections answering each with the client's subject.
fn server(acceptor: TlsAcceptor, connections: usize) -> (SocketAddr, mpsc::Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for _ in 0..connections {
            let (sock, _) = listener.accept().unwrap();
            let (acceptor, tx) = (acceptor.clone(), tx.clone());
            thread::spawn(move || {
                let seen = acceptor.accept(sock).map(|mut tls| {
                    let subject = tls.peer_certificate().map(|c| c.subject()).unwrap_or_default();
                    let mut head = BufReader::new(&mut tls);
                    let mut line = String::new();
                    while head.read_line(&mut line).is_ok_and(|n| n > 2) {
                        line.clear();
                    }
                    let response = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{subject}",
                        subject.len()
                    );
                    let _ = tls.write_all(response.as_bytes());
                    let _ = tls.shutdown();
                    subject
                });
                let _ = tx.send(seen);
            });
        }
    });
    (addr, rx)
}

fn curl(dir: &Path, addr: SocketAddr, cert: Option<&str>) -> (bool, String) {
    let url = format!("https://127.0.0.1:{}/", addr.port());
    let mut args = vec!["-sS", "--max-time", "30", "--cacert", "ca.pem"];
    if let Some(name) = cert {
        args.extend(["--cert", name, "--key"]);
        args.push(if name == "gimli.pem" {
            "gimli.key"
        } else {
            "other.key"
        });
    }
    args.push(&url);
    let out = cli::run("curl", "curl", dir, &args);
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn curl_with_a_client_certificate_is_accepted_and_others_refused() {
    let ca = Ca::root("Client CA");
    let stranger_ca = Ca::root("Stranger CA");
    let (server_cert, server_key) = ca.issue(CertBuilder::new("localhost").hosts(&["127.0.0.1"]));
    let (gimli, gimli_key) = ca.issue(CertBuilder::new("gimli").usage(Usage::TlsClient));
    let now = SystemTime::now();
    let day = Duration::from_secs(86_400);
    let others = [
        (
            "stranger",
            stranger_ca.issue(CertBuilder::new("orc").usage(Usage::TlsClient)),
            "unable to get local issuer certificate",
        ),
        (
            "expired",
            ca.issue(
                CertBuilder::new("old")
                    .usage(Usage::TlsClient)
                    .valid_between(now - 9 * day, now - day),
            ),
            "certificate has expired",
        ),
        (
            "server-only",
            ca.issue(CertBuilder::new("api")),
            "unsuitable certificate purpose",
        ),
    ];

    let pki = Pki::builder().add_root(&ca.cert).build().unwrap();
    let identity = Identity::new(&server_cert, &[], &server_key).unwrap();
    let acceptor = TlsAcceptor::builder(identity)
        .client_auth(&pki)
        .build()
        .unwrap();
    let (addr, seen) = server(acceptor, 2 + others.len());

    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    fs::write(dir.join("ca.pem"), ca.cert.to_pem().unwrap()).unwrap();
    fs::write(dir.join("gimli.pem"), gimli.to_pem().unwrap()).unwrap();
    fs::write(dir.join("gimli.key"), gimli_key.to_pem().unwrap()).unwrap();

    let (ok, body) = curl(dir, addr, Some("gimli.pem"));
    assert!(ok, "{body}");
    assert_eq!(body, "CN=gimli");
    assert_eq!(seen.recv().unwrap().unwrap(), "CN=gimli");

    let (ok, out) = curl(dir, addr, None);
    assert!(!ok, "{out}");
    let err = seen.recv().unwrap().unwrap_err();
    assert!(
        matches!(err, Error::CertificateVerification(_) | Error::Handshake(_)),
        "{err}"
    );

    for (what, (cert, key), reason) in others {
        fs::write(dir.join("other.pem"), cert.to_pem().unwrap()).unwrap();
        fs::write(dir.join("other.key"), key.to_pem().unwrap()).unwrap();
        let (ok, out) = curl(dir, addr, Some("other.pem"));
        assert!(!ok, "{what}: {out}");
        match seen.recv().unwrap() {
            Err(Error::CertificateVerification(text)) => {
                assert!(text.contains(reason), "{what}: {text}")
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}

#[test]
fn our_connector_presents_an_identity() {
    let ca = Ca::root("Client CA");
    let (server_cert, server_key) = ca.issue(CertBuilder::new("localhost"));
    let (client, client_key) = ca.issue(CertBuilder::new("balin").usage(Usage::TlsClient));
    let pki = Pki::builder().add_root(&ca.cert).build().unwrap();
    let acceptor = TlsAcceptor::builder(Identity::new(&server_cert, &[], &server_key).unwrap())
        .client_auth(&pki)
        .build()
        .unwrap();
    let (addr, seen) = server(acceptor, 2);
    let trusting = |identity: Option<Identity>| {
        let builder = TlsConnector::builder().add_root_certificate_pem(&ca.cert.to_pem().unwrap());
        match identity {
            Some(id) => builder.identity(id),
            None => builder,
        }
        .build()
        .unwrap()
    };

    let connector = trusting(Some(Identity::new(&client, &[], &client_key).unwrap()));
    let mut tls = connector
        .connect("localhost", TcpStream::connect(addr).unwrap())
        .unwrap();
    assert_eq!(tls.peer_certificate().unwrap(), server_cert);
    tls.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let mut response = String::new();
    std::io::Read::read_to_string(&mut tls, &mut response).unwrap();
    assert!(response.ends_with("CN=balin"), "{response}");
    assert_eq!(seen.recv().unwrap().unwrap(), "CN=balin");

    let bare = trusting(None);
    let refused = bare
        .connect("localhost", TcpStream::connect(addr).unwrap())
        .and_then(|mut tls| {
            tls.write_all(b"GET / HTTP/1.1\r\n\r\n")?;
            let mut rest = String::new();
            std::io::Read::read_to_string(&mut tls, &mut rest)?;
            Ok(rest)
        });
    assert!(refused.is_err(), "{refused:?}");
    assert!(seen.recv().unwrap().is_err());
}
