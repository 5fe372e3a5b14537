//! Proxies: plain HTTP goes to the proxy in absolute form with Basic proxy credentials; HTTPS
//! goes through a CONNECT tunnel (spliced by a raw-socket proxy) to our TLS server with the
//! origin's certificate checked end to end; a refused tunnel is `Error::Proxy`; `no_proxy`
//! hosts are reached directly.

use std::io::Write;
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc;
use std::sync::Mutex;

use crate::common::raw::{read_head, RawServer};
use crate::common::tls::start_tls;
use crate::common::*;
use moria_http::client::{Client, Error};
use moria_http::{HandlerResult, Request, Response, Server};

fn hello(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.body(format!("origin saw {}", req.target()));
    Ok(())
}

/// A proxy double that answers every request itself with the request head it received.
fn answering_proxy() -> RawServer {
    RawServer::start(|mut s, _| {
        while let Some(head) = read_head(&mut s) {
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{head}",
                head.len()
            );
            if s.write_all(answer.as_bytes()).is_err() {
                return;
            }
        }
    })
}

/// A CONNECT proxy: records each CONNECT head, refuses with 407 when `require` credentials are
/// missing, else connects to the target and splices both directions.
fn tunnelling_proxy(require: Option<String>) -> (RawServer, mpsc::Receiver<String>) {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let server = RawServer::start(move |mut s, _| {
        let Some(head) = read_head(&mut s) else {
            return;
        };
        let _ = tx.lock().unwrap().send(head.clone());
        if let Some(creds) = &require {
            if !head.contains(&format!("Proxy-Authorization: {creds}")) {
                let _ = s.write_all(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n",
                );
                return;
            }
        }
        let target = head
            .split_whitespace()
            .nth(1)
            .expect("CONNECT target")
            .replace("localhost", "127.0.0.1");
        let Ok(upstream) = TcpStream::connect(&target) else {
            let _ = s.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
            return;
        };
        s.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .unwrap();
        splice(s, upstream);
    });
    (server, rx)
}

/// Copies both directions until each side ends, passing each end on as a half-close.
fn splice(a: TcpStream, b: TcpStream) {
    let (mut a_in, mut b_out) = (a.try_clone().unwrap(), b.try_clone().unwrap());
    let forward = std::thread::spawn(move || {
        let _ = std::io::copy(&mut a_in, &mut b_out);
        let _ = b_out.shutdown(Shutdown::Write);
    });
    let (mut b_in, mut a_out) = (b, a);
    let _ = std::io::copy(&mut b_in, &mut a_out);
    let _ = a_out.shutdown(Shutdown::Write);
    let _ = forward.join();
}

#[test]
fn plain_http_goes_to_the_proxy_in_absolute_form_with_credentials() {
    let proxy = answering_proxy();
    let client = Client::builder()
        .http_proxy(&format!("http://ori%40moria:mel%3Alon@{}", proxy.addr))
        .build()
        .unwrap();
    let r = client
        .get("http://origin.example:8080/a/b?c=d")
        .send()
        .unwrap();
    let seen = r.text().unwrap();
    assert!(
        seen.starts_with("GET http://origin.example:8080/a/b?c=d HTTP/1.1\r\n"),
        "{seen}"
    );
    assert!(seen.contains("Host: origin.example:8080\r\n"), "{seen}");
    let basic = moria_crypto::encoding::base64(b"ori@moria:mel:lon");
    assert!(
        seen.contains(&format!("Proxy-Authorization: Basic {basic}\r\n")),
        "{seen}"
    );
    // Another origin through the same proxy.
    let r = client.get("http://other.example/").send().unwrap();
    assert!(r
        .text()
        .unwrap()
        .starts_with("GET http://other.example/ HTTP/1.1"));
}

#[test]
fn https_goes_through_a_connect_tunnel_with_end_to_end_verification() {
    let tls = start_tls(Server::builder(), hello);
    let (proxy, heads) = tunnelling_proxy(None);
    let client = Client::builder()
        .add_root_certificate_pem(&tls.pem)
        .https_proxy(&proxy.url(""))
        .build()
        .unwrap();
    let origin = format!("https://localhost:{}", tls.server.local_addr().port());
    for _ in 0..3 {
        let text = client
            .get(&format!("{origin}/x"))
            .send()
            .unwrap()
            .text()
            .unwrap();
        assert_eq!(text, "origin saw /x");
    }
    let connect = heads.recv().unwrap();
    let port = tls.server.local_addr().port();
    assert!(
        connect.starts_with(&format!("CONNECT localhost:{port} HTTP/1.1\r\n")),
        "{connect}"
    );
    assert_eq!(proxy.accepted(), 1, "one tunnel, kept alive");
    stop(&tls.server);
}

#[test]
fn a_refused_tunnel_is_a_proxy_error_and_credentials_open_it() {
    let tls = start_tls(Server::builder(), hello);
    let basic = moria_crypto::encoding::base64(b"u:p");
    let (proxy, _heads) = tunnelling_proxy(Some(format!("Basic {basic}")));
    let origin = format!("https://localhost:{}/", tls.server.local_addr().port());
    let anonymous = Client::builder()
        .add_root_certificate_pem(&tls.pem)
        .https_proxy(&proxy.url(""))
        .build()
        .unwrap();
    let err = anonymous.get(&origin).send().unwrap_err();
    assert!(matches!(err, Error::Proxy { status: 407, .. }), "{err}");
    let with_creds = Client::builder()
        .add_root_certificate_pem(&tls.pem)
        .https_proxy(&format!("http://u:p@{}", proxy.addr))
        .build()
        .unwrap();
    let text = with_creds.get(&origin).send().unwrap().text().unwrap();
    assert_eq!(text, "origin saw /");
    stop(&tls.server);
}

#[test]
fn no_proxy_hosts_are_reached_directly() {
    let server = start(Server::builder(), hello);
    let proxy = answering_proxy();
    let client = Client::builder()
        .http_proxy(&proxy.url(""))
        .no_proxy("localhost, 127.0.0.1")
        .build()
        .unwrap();
    let text = client
        .get(&url(&server, "/d"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert_eq!(text, "origin saw /d");
    assert_eq!(proxy.accepted(), 0);
    stop(&server);
}

#[test]
fn bad_proxy_settings_fail_the_build() {
    for bad in [
        "https://proxy:1",
        "socks5://proxy:1",
        "http://a:%zz@proxy:1",
    ] {
        let err = Client::builder().http_proxy(bad).build().unwrap_err();
        assert!(matches!(err, Error::Config(_)), "{bad}: {err}");
    }
}
