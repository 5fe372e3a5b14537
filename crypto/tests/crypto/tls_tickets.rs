//! Session tickets under [`TicketKeys`]: a ticket from one acceptor resumes on another that
//! shares its keys (and not on one with its own), with `openssl s_client -sess_out/-sess_in`
//! over TLS 1.3 and 1.2 and with our connector; a ticket sealed before a rotation still
//! resumes (and is renewed), one older than the kept keys falls back to a full handshake. A
//! missing `openssl` command fails the tests, naming the Debian package.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use crate::common::scratch_dir;
use crate::common::tls::{echo_server, round_trip, trusting};
use moria_crypto::{Identity, TicketKeys, TlsAcceptor};

/// Upper bound on any `openssl` child's life (enforced by coreutils `timeout`).
const CHILD_LIMIT_SECS: &str = "30";

/// A rotation interval no test reaches: keys change only when a test rotates them.
const NEVER: Duration = Duration::from_secs(24 * 3600);

/// Serves one connection: reads up to a newline, echoes it, closes; returns whether the
/// handshake resumed a session.
fn resume_server(acceptor: TlsAcceptor) -> (SocketAddr, thread::JoinHandle<bool>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        let mut tls = acceptor.accept(sock).unwrap();
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while tls.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        line.push(b'\n');
        tls.write_all(&line).unwrap();
        tls.shutdown().unwrap();
        tls.session_reused()
    });
    (addr, handle)
}

/// `openssl s_client` to `acceptor`, saving the session it receives to `sess_out` and
/// offering `sess_in` if given; returns (the server's and the client's word on resumption).
fn s_client(
    acceptor: &TlsAcceptor,
    version: &str,
    sess_in: Option<&Path>,
    sess_out: &Path,
) -> (bool, bool) {
    let found = Command::new("openssl").arg("version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "no working `openssl` command: install the Debian package openssl"
    );
    let (addr, server) = resume_server(acceptor.clone());
    let mut args = vec![
        "s_client".to_string(),
        "-connect".into(),
        addr.to_string(),
        "-servername".into(),
        "localhost".into(),
        version.into(),
        // Reads until the server closes, so the tickets (sent before the echo) arrive.
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
    child.stdin.as_mut().unwrap().write_all(b"ping\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let reused = server.join().unwrap();
    assert!(text.contains("ping"), "no echo:\n{text}");
    let client_reused = text.contains("\nReused, ");
    assert!(
        client_reused || text.contains("\nNew, "),
        "no session line:\n{text}"
    );
    (reused, client_reused)
}

fn acceptor(identity: &Identity, keys: &TicketKeys) -> TlsAcceptor {
    TlsAcceptor::builder(identity.clone())
        .ticket_keys(keys.clone())
        .build()
        .unwrap()
}

#[test]
fn s_client_resumes_on_another_acceptor_sharing_the_keys_only() {
    let dir = scratch_dir("tickets-share");
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let keys = TicketKeys::with_rotation(NEVER, 1).unwrap();
    let first = acceptor(&identity, &keys);
    // A second acceptor (another listener's context) given the first one's set.
    let second = TlsAcceptor::builder(identity.clone())
        .ticket_keys(first.ticket_keys().clone())
        .build()
        .unwrap();
    // One with OpenSSL's usual arrangement: a key set of its own.
    let stranger = TlsAcceptor::builder(identity.clone()).build().unwrap();
    assert!(second.ticket_keys().same_set(&keys));
    assert!(!stranger.ticket_keys().same_set(&keys));
    for version in ["-tls1_3", "-tls1_2"] {
        let sess = dir.path().join(format!("session{version}.pem"));
        let scratch = dir.path().join("later.pem");
        assert_eq!(s_client(&first, version, None, &sess), (false, false));
        let resumed = s_client(&second, version, Some(&sess), &scratch);
        assert_eq!(resumed, (true, true), "{version} on the sharing acceptor");
        let refused = s_client(&stranger, version, Some(&sess), &scratch);
        assert_eq!(refused, (false, false), "{version} on a stranger");
    }
}

#[test]
fn a_ticket_survives_one_rotation_and_not_more_than_the_kept_keys() {
    let dir = scratch_dir("tickets-rotate");
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let keys = TicketKeys::with_rotation(NEVER, 1).unwrap();
    let server = acceptor(&identity, &keys);
    let (old, renewed, scratch) = (
        dir.path().join("old.pem"),
        dir.path().join("renewed.pem"),
        dir.path().join("scratch.pem"),
    );
    assert_eq!(s_client(&server, "-tls1_3", None, &old), (false, false));
    keys.rotate().unwrap();
    // Sealed under the retired key: resumes, and comes back with a ticket under the new one.
    assert_eq!(
        s_client(&server, "-tls1_3", Some(&old), &renewed),
        (true, true)
    );
    keys.rotate().unwrap();
    // Its key is now one rotation past the one kept: a full handshake.
    assert_eq!(
        s_client(&server, "-tls1_3", Some(&old), &scratch),
        (false, false)
    );
    // The renewed ticket's key is the one kept.
    assert_eq!(
        s_client(&server, "-tls1_3", Some(&renewed), &scratch),
        (true, true)
    );
}

#[test]
fn with_no_key_kept_a_rotation_ends_every_ticket() {
    let dir = scratch_dir("tickets-expire");
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let keys = TicketKeys::with_rotation(NEVER, 0).unwrap();
    let server = acceptor(&identity, &keys);
    let (sess, scratch) = (dir.path().join("s.pem"), dir.path().join("t.pem"));
    assert_eq!(s_client(&server, "-tls1_3", None, &sess), (false, false));
    assert_eq!(
        s_client(&server, "-tls1_3", Some(&sess), &scratch),
        (true, true)
    );
    keys.rotate().unwrap();
    assert_eq!(
        s_client(&server, "-tls1_3", Some(&sess), &scratch),
        (false, false)
    );
}

#[test]
fn our_connector_resumes_across_acceptors_sharing_the_keys() {
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let keys = TicketKeys::new().unwrap();
    let connector = trusting(&identity.certificate_pem().unwrap());
    let mut reused = Vec::new();
    for _ in 0..3 {
        // A fresh acceptor (a fresh SSL_CTX) each time, always with the same key set.
        let (addr, server) = echo_server(acceptor(&identity, &keys), 1);
        let mut tls = connector
            .connect("localhost", TcpStream::connect(addr).unwrap())
            .unwrap();
        round_trip(&mut tls, b"ticket please");
        reused.push(tls.session_reused());
        drop(tls);
        let seen = server.join().unwrap().pop().unwrap().unwrap();
        assert_eq!(seen.reused, *reused.last().unwrap());
    }
    assert_eq!(reused, [false, true, true]);
}
