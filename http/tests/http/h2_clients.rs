//! HTTP/2 against real clients: curl with `--http2-prior-knowledge` (h2c on the HTTP/1.1 port)
//! and `--http2` over TLS (ALPN), nghttp with many streams on one connection. The same
//! handlers and static files as over h1: GET, HEAD, POST with a body, a large file, ranges and
//! conditional requests, `Expect: 100-continue` (a 100, or a 413 before the body).

use std::io::Read;

use moria_crypto::{Identity, TlsAcceptor};
use moria_http::{Request, Response, Server, StaticFiles};

use crate::common::curl::require_curl;
use crate::common::files::{small_bytes, text_bytes, tree};
use crate::common::h2::{curl_h2_tls, curl_h2c, nghttp, require_nghttp, stdout};
use crate::common::h2raw::H2Raw;
use crate::common::{start, stop};

/// Splits curl's output into the body and what `-w '\n%{http_version} %{http_code}'` printed.
fn body_and_tail(out: &str) -> (&str, &str) {
    out.rsplit_once('\n').unwrap()
}

fn files() -> (crate::common::files::Tree, Server) {
    let t = tree();
    let files = StaticFiles::builder(t.root()).build().unwrap();
    let server = start(Server::builder(), files);
    (t, server)
}

#[test]
fn curl_h2c_gets_heads_ranges_and_a_large_file() {
    require_curl();
    let (_t, server) = files();
    let addr = server.local_addr();
    let w = ["-w", "\n%{http_version} %{http_code}"];
    let out = stdout(&curl_h2c(addr, "/hello.txt", &w));
    assert_eq!(body_and_tail(&out), ("hello world\n", "2 200"));

    let out = stdout(&curl_h2c(addr, "/hello.txt", &["-I"]));
    assert!(out.starts_with("HTTP/2 200"), "{out}");
    assert!(out.contains("content-length: 12"), "{out}");

    let o = curl_h2c(addr, "/small.bin", &["-r", "100-199"]);
    assert!(o.status.success());
    assert_eq!(o.stdout, &small_bytes()[100..200]);

    let o = curl_h2c(addr, "/big.txt", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout, text_bytes(300_000));

    // Conditional: the ETag saved from one answer makes the next a 304.
    let dir = tempfile::tempdir().unwrap();
    let etag = dir.path().join("etag");
    let etag = etag.to_str().unwrap();
    stdout(&curl_h2c(
        addr,
        "/hello.txt",
        &["--etag-save", etag, "-o", "/dev/null"],
    ));
    let out = stdout(&curl_h2c(
        addr,
        "/hello.txt",
        &[
            "--etag-compare",
            etag,
            "-w",
            "%{http_code}",
            "-o",
            "/dev/null",
        ],
    ));
    assert_eq!(out, "304");
    stop(&server);
}

#[test]
fn curl_h2c_posts_a_body_the_handler_reads() {
    require_curl();
    let echo = |req: &mut Request<'_>, res: &mut Response| {
        let mut body = Vec::new();
        req.body().read_to_end(&mut body)?;
        res.body(body);
        Ok(())
    };
    let server = start(Server::builder(), echo);
    let addr = server.local_addr();
    let dir = tempfile::tempdir().unwrap();
    let data = text_bytes(200_000);
    let path = dir.path().join("upload");
    std::fs::write(&path, &data).unwrap();
    let at = format!("@{}", path.display());
    let o = curl_h2c(addr, "/echo", &["--data-binary", &at]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout, data);
    let out = stdout(&curl_h2c(addr, "/echo", &["--data-binary", "short"]));
    assert_eq!(out, "short");
    stop(&server);
}

#[test]
fn curl_negotiates_h2_by_alpn_over_tls() {
    require_curl();
    let t = tree();
    let files = StaticFiles::builder(t.root()).build().unwrap();
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let acceptor = TlsAcceptor::builder(identity)
        .alpn(&["h2", "http/1.1"])
        .build()
        .unwrap();
    let pem = acceptor.certificate_pem().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pem).unwrap();
    let server = Server::builder()
        .listen_tls("127.0.0.1:0", acceptor)
        .start(files)
        .unwrap();
    let addr = server.local_addr();
    let w = ["-w", "\n%{http_version} %{http_code}"];
    let out = stdout(&curl_h2_tls(addr, &ca, "/hello.txt", &w));
    assert_eq!(body_and_tail(&out), ("hello world\n", "2 200"));
    let o = curl_h2_tls(addr, &ca, "/big.txt", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout, text_bytes(300_000));
    // A client that offers only HTTP/1.1 still gets it.
    let out = stdout(&curl_h2_tls(
        addr,
        &ca,
        "/hello.txt",
        &["--http1.1", "-w", "\n%{http_version}"],
    ));
    assert_eq!(body_and_tail(&out), ("hello world\n", "1.1"));
    stop(&server);
}

#[test]
fn nghttp_runs_many_streams_on_one_connection() {
    require_nghttp();
    let (_t, server) = files();
    let addr = server.local_addr();
    let out = stdout(&nghttp(addr, "/small.bin", &["-v", "-m", "50"]));
    assert_eq!(out.matches(":status: 200").count(), 50, "{out}");
    assert!(!out.contains("RST_STREAM"), "{out}");
    stop(&server);
}

#[test]
fn shutdown_sends_goaway_to_an_idle_h2_connection() {
    let (_t, server) = files();
    let mut c = H2Raw::connect(server.local_addr());
    c.get(1, "/hello.txt", true, &[]);
    c.response_block(1);
    c.until_end(1);
    stop(&server);
    assert_eq!(c.goaway(), (1, 0), "GOAWAY(NO_ERROR) naming stream 1");
}

#[test]
fn expect_100_continue_over_h2c_answered_by_curl_and_refused_to_nghttp() {
    require_curl();
    // Reads and echoes the body, unless it is declared longer than 1,000 bytes: then 413
    // without reading it.
    let handler = |req: &mut Request<'_>, res: &mut Response| {
        let declared: u64 = req
            .header("content-length")
            .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
            .unwrap_or(0);
        if declared > 1000 {
            res.status(413);
            return Ok(());
        }
        let mut body = Vec::new();
        req.body().read_to_end(&mut body)?;
        res.body(body);
        Ok(())
    };
    let server = start(Server::builder(), handler);
    let addr = server.local_addr();
    // curl waits up to 30 s for the 100 before it sends the body: it never gives up first.
    let expect = [
        "-v",
        "-H",
        "Expect: 100-continue",
        "--expect100-timeout",
        "30",
    ];
    let o = curl_h2c(
        addr,
        "/",
        &[&expect[..], &["--data-binary", "small body"]].concat(),
    );
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{log}");
    assert_eq!(o.stdout, b"small body");
    assert!(log.contains("< HTTP/2 100"), "{log}");

    // The refusal through nghttp (curl 7.88 reports the RST_STREAM(NO_ERROR) that follows an
    // answer given before the request ended, as RFC 9113 §8.1 has it, as an empty reply).
    require_nghttp();
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big");
    std::fs::write(&big, "x".repeat(5000)).unwrap();
    let big = big.to_str().unwrap();
    let out = stdout(&nghttp(addr, "/", &["-v", "--expect-continue", "-d", big]));
    assert!(out.contains(":status: 413"), "{out}");
    assert!(!out.contains(":status: 100"), "{out}");
    assert!(!out.contains("send DATA frame"), "no body sent: {out}");
    stop(&server);
}
