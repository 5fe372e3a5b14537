//! HTTPS: HTTP and HTTPS listeners in one server; requests through moria-crypto's TLS client
//! (keep-alive, pipelining, TLS info reaching the handler), a handshake that never completes
//! does not stall other clients, and `curl` (a missing curl fails, naming the package).

use std::io::Write;
use std::net::TcpStream;
use std::process::Command;

use crate::common::*;
use moria_http::{HandlerResult, Request, Response, Server};

fn hello(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let proto = req.tls().map_or("plain".to_string(), |t| t.version.clone());
    let mut body = Vec::new();
    std::io::Read::read_to_end(req.body(), &mut body)?;
    res.body(format!("{proto} {} {}", req.path(), body.len()));
    Ok(())
}

/// A server with a plain listener first and an HTTPS listener second.
fn server() -> (Server, Vec<u8>) {
    let (acceptor, pem) = tls::acceptor();
    let server = Server::builder()
        .listen("127.0.0.1:0")
        .listen_tls("127.0.0.1:0", acceptor)
        .shutdown_grace(TEST_GRACE)
        .start(hello)
        .unwrap();
    (server, pem)
}

fn tls_client(server: &Server, pem: &[u8]) -> moria_crypto::TlsStream<TcpStream> {
    tls::connect_tls(server.local_addrs()[1], pem)
}

#[test]
fn http_and_https_in_one_server() {
    let (server, pem) = server();
    let r = exchange(
        server.local_addrs()[0],
        b"GET /plain HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    assert_eq!(r.text(), "plain /plain 0");
    let mut s = tls_client(&server, &pem);
    for i in 0..20 {
        write!(
            s,
            "POST /tls/{i} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nabc"
        )
        .unwrap();
        let r = read_response(&mut s, false).expect("response over TLS");
        assert!(r.text().starts_with("TLSv1."), "{}", r.text());
        assert!(r.text().ends_with(&format!(" /tls/{i} 3")), "{}", r.text());
    }
    stop(&server);
}

#[test]
fn pipelined_requests_over_tls() {
    let (server, pem) = server();
    let mut s = tls_client(&server, &pem);
    let mut batch = Vec::new();
    for i in 0..16 {
        write!(batch, "GET /{i} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    }
    s.write_all(&batch).unwrap();
    for i in 0..16 {
        let r = read_response(&mut s, false).unwrap();
        assert!(r.text().ends_with(&format!(" /{i} 0")));
    }
    stop(&server);
}

#[test]
fn stalled_handshake_does_not_block_other_clients() {
    let (server, pem) = server();
    // Connects to the HTTPS port and never says anything.
    let _silent = connect(server.local_addrs()[1]);
    let mut s = tls_client(&server, &pem);
    s.write_all(b"GET /ok HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    assert!(read_response(&mut s, false)
        .unwrap()
        .text()
        .ends_with(" /ok 0"));
    stop(&server);
}

#[test]
fn plain_http_on_the_tls_port_is_dropped() {
    let (server, _pem) = server();
    let mut s = connect(server.local_addrs()[1]);
    s.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    assert_closed(&mut s);
    stop(&server);
}

#[test]
fn curl_over_https() {
    assert!(
        Command::new("curl").arg("--version").output().is_ok(),
        "curl is missing: install the Debian package curl"
    );
    let (server, pem) = server();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pem).unwrap();
    let port = server.local_addrs()[1].port();
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "20", "--cacert"])
        .arg(&ca)
        .args(["--resolve", &format!("localhost:{port}:127.0.0.1")])
        .args(["-d", "hello", &format!("https://localhost:{port}/curl")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("TLSv1.") && text.ends_with(" /curl 5"),
        "{text}"
    );
    stop(&server);
}
