//! Interop with the `openssl` command: `s_client` against our acceptor (TLS 1.3, TLS 1.2,
//! refused TLS 1.1) and our connector against `s_server` (echo, wrong host). A missing
//! `openssl` command fails the tests, naming the Debian package. Keys written for the command
//! live in a scratch directory removed when the test ends.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread;

use crate::common::scratch_dir;
use moria_crypto::{Error, Identity, TlsAcceptor};

/// Upper bound on any `openssl` child's life (enforced by coreutils `timeout`).
const CHILD_LIMIT_SECS: &str = "30";

/// Fails the test, naming the package to install, when the `openssl` command is missing.
fn require_openssl() {
    let found = Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "no working `openssl` command: install the Debian package openssl"
    );
}

/// Runs `openssl <args>` under a time limit, with `input` on stdin (kept open until the
/// server closes the connection); returns stdout + stderr.
fn openssl_client(args: &[&str], input: &[u8]) -> String {
    let mut child = Command::new("timeout")
        .arg(CHILD_LIMIT_SECS)
        .arg("openssl")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.as_mut().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Reads from `r` until a newline (or end of stream).
fn read_line(r: &mut impl Read) -> std::io::Result<String> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while r.read(&mut byte)? == 1 {
        line.push(byte[0]);
        if byte[0] == b'\n' {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&line).into_owned())
}

/// One-connection server: reads a line, answers `pong <version> <alpn>`, sends close_notify.
fn pong_server(
    acceptor: TlsAcceptor,
) -> (SocketAddr, thread::JoinHandle<moria_crypto::Result<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = thread::spawn(move || {
        let (sock, _) = listener.accept()?;
        let mut tls = acceptor.accept(sock)?;
        let line = read_line(&mut tls)?;
        let alpn = String::from_utf8_lossy(tls.alpn_protocol().unwrap_or(b"-")).into_owned();
        write!(tls, "pong {} {alpn} {line}", tls.version())?;
        tls.flush()?;
        tls.shutdown()?;
        Ok(tls.version().to_owned())
    });
    (addr, handle)
}

fn write_identity(dir: &Path, identity: &Identity) -> (String, String) {
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    std::fs::write(&cert, identity.certificate_pem().unwrap()).unwrap();
    std::fs::write(&key, identity.private_key_pem().unwrap()).unwrap();
    (
        cert.to_string_lossy().into_owned(),
        key.to_string_lossy().into_owned(),
    )
}

#[test]
fn s_client_verifies_and_talks_to_our_acceptor() {
    require_openssl();
    let dir = scratch_dir("s_client");
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let (cert, key) = write_identity(dir.path(), &identity);
    // The acceptor loads the same files back, the way a server is usually configured.
    let acceptor =
        TlsAcceptor::builder(Identity::from_pem_files(Path::new(&cert), Path::new(&key)).unwrap())
            .alpn(&["http/1.1"])
            .build()
            .unwrap();
    for (version_flag, expected) in [("-tls1_3", "TLSv1.3"), ("-tls1_2", "TLSv1.2")] {
        let (addr, server) = pong_server(acceptor.clone());
        let output = openssl_client(
            &[
                "s_client",
                "-connect",
                &addr.to_string(),
                "-servername",
                "localhost",
                "-CAfile",
                &cert,
                "-verify_return_error",
                "-verify_hostname",
                "localhost",
                "-alpn",
                "http/1.1",
                version_flag,
                "-quiet",
            ],
            b"ping\n",
        );
        let version = server
            .join()
            .unwrap()
            .unwrap_or_else(|e| panic!("{e}\n{output}"));
        assert_eq!(version, expected);
        assert!(
            output.contains(&format!("pong {expected} http/1.1 ping")),
            "{output}"
        );
    }
}

#[test]
fn tls_1_1_is_refused() {
    require_openssl();
    let (addr, server) = pong_server(TlsAcceptor::self_signed(&["localhost"]).unwrap());
    // SECLEVEL=0 lets the client really offer TLS 1.1, so the refusal is the server's.
    let output = openssl_client(
        &[
            "s_client",
            "-connect",
            &addr.to_string(),
            "-tls1_1",
            "-cipher",
            "DEFAULT@SECLEVEL=0",
            "-quiet",
        ],
        b"ping\n",
    );
    let err = server.join().unwrap().unwrap_err();
    assert!(
        matches!(&err, Error::Handshake(m) if m.contains("unsupported protocol")),
        "{err:?}\n{output}"
    );
    assert!(!output.contains("pong"), "{output}");
}

/// Starts `openssl s_server` on a loopback port it picks; returns it once it says it accepts
/// connections (its `ACCEPT <address>` line), with its output drained on a thread.
fn s_server(cert: &str, key: &str, extra: &[&str]) -> (Child, SocketAddr) {
    let mut child = Command::new("timeout")
        .arg(CHILD_LIMIT_SECS)
        .arg("openssl")
        .args([
            "s_server",
            "-accept",
            "127.0.0.1:0",
            "-cert",
            cert,
            "-key",
            key,
        ])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let addr = loop {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("s_server exited before accepting connections:\n{seen}");
        }
        if let Some(addr) = line.trim().strip_prefix("ACCEPT ") {
            break addr.parse().unwrap();
        }
        seen.push_str(&line);
    };
    thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    (child, addr)
}

#[test]
fn our_connector_talks_to_s_server() {
    require_openssl();
    let dir = scratch_dir("s_server");
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let (cert, key) = write_identity(dir.path(), &identity);
    let (mut child, addr) = s_server(&cert, &key, &["-rev", "-alpn", "http/1.1"]);
    let connector = moria_crypto::TlsConnector::builder()
        .add_root_certificate_pem(&identity.certificate_pem().unwrap())
        .alpn(&["http/1.1"])
        .build()
        .unwrap();
    let result = (|| -> moria_crypto::Result<(String, Option<Vec<u8>>)> {
        let mut tls = connector.connect("localhost", TcpStream::connect(addr)?)?;
        tls.write_all(b"hello moria\n")?;
        let mut line = read_line(&mut tls)?;
        while line.trim().is_empty() || line.contains("CONNECTED") {
            line = read_line(&mut tls)?;
        }
        Ok((line, tls.alpn_protocol().map(<[u8]>::to_vec)))
    })();
    let wrong_host = connector.connect("evil.test", TcpStream::connect(addr).unwrap());
    let _ = child.kill();
    let _ = child.wait();
    let (line, alpn) = result.unwrap();
    assert_eq!(line.trim(), "airom olleh");
    assert_eq!(alpn.as_deref(), Some(&b"http/1.1"[..]));
    match wrong_host {
        Err(Error::CertificateVerification(msg)) => assert!(msg.contains("hostname mismatch")),
        other => panic!("expected a hostname mismatch, got {other:?}"),
    }
}

#[test]
fn s_client_rejects_an_untrusted_acceptor() {
    require_openssl();
    let (addr, server) = pong_server(TlsAcceptor::self_signed(&["localhost"]).unwrap());
    let output = openssl_client(
        &[
            "s_client",
            "-connect",
            &addr.to_string(),
            "-servername",
            "localhost",
            "-verify_return_error",
            "-quiet",
        ],
        b"ping\n",
    );
    assert!(server.join().unwrap().is_err(), "{output}");
    assert!(output.contains("self-signed certificate"), "{output}");
}
