//! StaticFiles against `curl`: ranges, multipart ranges, 416, conditional requests with `-z`
//! (If-Modified-Since) and an ETag round trip (`--etag-save` / `--etag-compare`), and
//! decompression of the precompressed sibling. A missing curl fails the tests, naming the
//! Debian package.

use std::net::SocketAddr;
use std::process::{Command, Output};

use crate::common::curl::require_curl;
use crate::common::files::{serve, small_bytes, text_bytes, tree};
use crate::common::stop;

/// Runs curl with `args` against `http://addr{target}`, body to stdout.
fn curl(addr: SocketAddr, target: &str, args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .args(args)
        .arg(format!("http://{addr}{target}"))
        .output()
        .unwrap()
}

/// The status code curl saw (`-w %{http_code}` printed after the body).
fn code_and_body(o: &Output) -> (u16, Vec<u8>) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (body, code) = o.stdout.split_at(o.stdout.len() - 3);
    (
        std::str::from_utf8(code).unwrap().parse().unwrap(),
        body.to_vec(),
    )
}

#[test]
fn curl_ranges() {
    require_curl();
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let addr = server.local_addr();
    let data = small_bytes();
    let (code, body) = code_and_body(&curl(
        addr,
        "/small.bin",
        &["-r", "100-199", "-w", "%{http_code}"],
    ));
    assert_eq!((code, body.as_slice()), (206, &data[100..200]));
    let (code, body) = code_and_body(&curl(
        addr,
        "/small.bin",
        &["-r", "-12", "-w", "%{http_code}"],
    ));
    assert_eq!((code, body.as_slice()), (206, &data[data.len() - 12..]));
    let (code, _) = code_and_body(&curl(
        addr,
        "/small.bin",
        &["-r", "5000-", "-w", "%{http_code}"],
    ));
    assert_eq!(code, 416);
    let o = curl(
        addr,
        "/small.bin",
        &["-r", "0-3,10-13", "-D", "-", "-o", "/dev/null"],
    );
    let head = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        head.contains("206") && head.contains("multipart/byteranges"),
        "{head}"
    );
    let big = text_bytes(300_000);
    let (code, body) = code_and_body(&curl(
        addr,
        "/big.txt",
        &["-r", "123456-223455", "-w", "%{http_code}"],
    ));
    assert_eq!((code, body.as_slice()), (206, &big[123_456..223_456]));
    stop(&server);
}

#[test]
fn curl_conditionals() {
    require_curl();
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let addr = server.local_addr();
    // -z FILE sends If-Modified-Since with the file's time: the served file is no newer.
    let file = t.path("hello.txt");
    let z = file.to_str().unwrap();
    let (code, body) = code_and_body(&curl(addr, "/hello.txt", &["-z", z, "-w", "%{http_code}"]));
    assert_eq!((code, body.len()), (304, 0));
    let (code, _) = code_and_body(&curl(
        addr,
        "/hello.txt",
        &["-z", "1 Jan 2000", "-w", "%{http_code}"],
    ));
    assert_eq!(code, 200);
    // An ETag round trip: saved from a first answer, sent back as If-None-Match.
    let etag = t.dir.path().join("etag");
    let e = etag.to_str().unwrap();
    let (code, _) = code_and_body(&curl(
        addr,
        "/hello.txt",
        &["--etag-save", e, "-w", "%{http_code}"],
    ));
    assert_eq!(code, 200);
    let (code, _) = code_and_body(&curl(
        addr,
        "/hello.txt",
        &["--etag-compare", e, "-w", "%{http_code}"],
    ));
    assert_eq!(code, 304);
    let (code, _) = code_and_body(&curl(
        addr,
        "/hello.txt",
        &["-H", "If-Match: \"nope\"", "-w", "%{http_code}"],
    ));
    assert_eq!(code, 412);
    stop(&server);
}

#[test]
fn curl_compressed() {
    require_curl();
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let (code, body) = code_and_body(&curl(
        server.local_addr(),
        "/pre.css",
        &["--compressed", "-w", "%{http_code}"],
    ));
    assert_eq!((code, body), (200, text_bytes(5_000)));
    stop(&server);
}
