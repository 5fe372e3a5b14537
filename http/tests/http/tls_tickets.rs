//! TLS session tickets across a server's listeners: one HTTPS address served by two listeners
//! (SO_REUSEPORT, one accept loop each) and a second address whose acceptor is given the
//! first one's `TicketKeys`. A ticket from any of them resumes on all of them, with `openssl
//! s_client -sess_out/-sess_in` and with moria-http's client; a server with its own keys
//! does not resume it. A missing `openssl` command fails the test, naming the Debian package.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::*;
use moria_crypto::{Identity, TlsAcceptor};
use moria_http::client::Client;
use moria_http::{HandlerResult, Request, Response, Server};

/// Upper bound on any `openssl` child's life (enforced by coreutils `timeout`).
const CHILD_LIMIT_SECS: &str = "30";

fn hello(_req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.body("hello");
    Ok(())
}

/// A server on two HTTPS addresses, the first with two listeners, sharing one ticket key set;
/// and the certificate to trust.
fn sharing_server() -> (Server, Vec<u8>) {
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let pem = identity.certificate_pem().unwrap();
    let first = TlsAcceptor::builder(identity.clone()).build().unwrap();
    let second = TlsAcceptor::builder(identity)
        .ticket_keys(first.ticket_keys().clone())
        .build()
        .unwrap();
    let server = Server::builder()
        .listeners_per_address(2)
        .listen_tls("127.0.0.1:0", first)
        .listen_tls("127.0.0.1:0", second)
        .shutdown_grace(TEST_GRACE)
        .start(hello)
        .unwrap();
    (server, pem)
}

/// One `GET /` through `openssl s_client` to `addr`, saving the session to `sess_out` and
/// offering `sess_in`; returns whether s_client reports the session reused.
fn s_client(addr: SocketAddr, sess_in: Option<&Path>, sess_out: &Path) -> bool {
    let found = Command::new("openssl").arg("version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "no working `openssl` command: install the Debian package openssl"
    );
    let mut args = vec![
        "s_client".to_string(),
        "-connect".into(),
        addr.to_string(),
        "-servername".into(),
        "localhost".into(),
        // Reads until the server closes, so the tickets (sent before the response) arrive.
        "-ign_eof".into(),
        "-sess_out".into(),
        sess_out.display().to_string(),
    ];
    if let Some(file) = sess_in {
        args.extend(["-sess_in".into(), file.display().to_string()]);
    }
    let mut child = Command::new("timeout")
        .arg(CHILD_LIMIT_SECS)
        .arg("openssl")
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .as_mut()
        .unwrap()
        .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("HTTP/1.1 200"), "no response:\n{text}");
    let reused = text.contains("\nReused, TLSv1.3");
    assert!(reused || text.contains("\nNew, TLSv1.3"), "{text}");
    reused
}

#[test]
fn s_client_resumes_on_every_listener_sharing_the_keys() {
    let (server, _pem) = sharing_server();
    let (a, b) = (server.local_addrs()[0], server.local_addrs()[1]);
    let dir = tempfile::tempdir().unwrap();
    let (sess, later) = (dir.path().join("sess.pem"), dir.path().join("later.pem"));
    assert!(!s_client(a, None, &sess), "the first handshake is full");
    // Eight connections to the two-listener address: the kernel spreads them over both
    // listeners (and the fibers over the workers); every one resumes.
    for i in 0..8 {
        assert!(s_client(a, Some(&sess), &later), "connection {i} to {a}");
    }
    assert!(s_client(b, Some(&sess), &later), "the other address");
    // A server with a key set of its own cannot open the ticket: a full handshake.
    let stranger = tls::start_tls(Server::builder(), hello).server;
    assert!(!s_client(stranger.local_addr(), Some(&sess), &later));
    assert_eq!(server.stats().accepted, 10);
    stop(&stranger);
    stop(&server);
}

#[test]
fn our_client_resumes_on_the_other_address() {
    let (server, pem) = sharing_server();
    let (a, b) = (server.local_addrs()[0], server.local_addrs()[1]);
    // No idle connections kept: every request opens a new one, resuming the last session.
    let client = Client::builder()
        .add_root_certificate_pem(&pem)
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut resumed = Vec::new();
    for addr in [a, b, a, b] {
        let url = format!("https://localhost:{}/", addr.port());
        let r = client.get(&url).send().unwrap();
        resumed.push(r.tls_resumed());
        assert_eq!(r.text().unwrap(), "hello");
    }
    assert_eq!(resumed, [Some(false), Some(true), Some(true), Some(true)]);
    stop(&server);
}
