//! HTTPS and large bodies: a 100 MiB download checked by SHA-256 over HTTP and HTTPS, a file
//! uploaded by sendfile (HTTP) and by reads (HTTPS), keep-alive over TLS, TLS session
//! resumption on a fresh pooled connection, SNI and ALPN,
//! certificate verification on by default, and the insecure switch.

use std::io::Read;
use std::sync::{Arc, OnceLock};

use crate::common::tls::start_tls;
use crate::common::*;
use moria_crypto::{Hasher, Identity, TlsAcceptor};
use moria_http::client::{Client, Error};
use moria_http::{Body, HandlerResult, Request, Response, Server};

const BIG: usize = 100 * 1024 * 1024;

/// 100 MiB of xorshift bytes, made once.
fn big() -> Arc<Vec<u8>> {
    static DATA: OnceLock<Arc<Vec<u8>>> = OnceLock::new();
    Arc::clone(DATA.get_or_init(|| {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut v = Vec::with_capacity(BIG);
        while v.len() < BIG {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.extend_from_slice(&x.to_le_bytes());
        }
        Arc::new(v)
    }))
}

fn sha256(data: &[u8]) -> String {
    let mut h = Hasher::new("sha256").unwrap();
    h.update(data).unwrap();
    h.finish().unwrap().to_hex()
}

fn handler(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    match req.path() {
        "/big" => {
            let data = big();
            res.content_type("application/octet-stream");
            res.body(Body::reader(
                SharedReader { data, pos: 0 },
                Some(BIG as u64),
            ));
        }
        "/sha256" => {
            let mut h = Hasher::new("sha256")?;
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = req.body().read(&mut buf)?;
                if n == 0 {
                    break;
                }
                h.update(&buf[..n])?;
            }
            res.body(h.finish()?.to_hex());
        }
        "/tls" => {
            let info = req.tls().cloned().unwrap_or_default();
            let alpn = info.alpn.unwrap_or_default();
            let sni = info.server_name.unwrap_or_default();
            res.body(format!("{sni} {}", String::from_utf8_lossy(&alpn)));
        }
        _ => {
            res.body("hello");
        }
    }
    Ok(())
}

/// Reads a shared buffer without copying it first.
struct SharedReader {
    data: Arc<Vec<u8>>,
    pos: usize,
}

impl Read for SharedReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = &self.data[self.pos..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

/// Downloads `url` in 64 KiB reads, hashing as it streams; returns (hash, length).
fn download(client: &Client, url: &str) -> (String, usize) {
    let mut r = client.get(url).send().unwrap();
    assert_eq!(r.status(), 200);
    let mut h = Hasher::new("sha256").unwrap();
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0;
    loop {
        let n = r.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        h.update(&buf[..n]).unwrap();
        total += n;
    }
    (h.finish().unwrap().to_hex(), total)
}

#[test]
fn large_download_over_http_matches_by_sha256() {
    let want = sha256(&big());
    let server = start(Server::builder(), handler);
    let client = Client::new().unwrap();
    let got = download(&client, &url(&server, "/big"));
    assert_eq!(got, (want, BIG));
    stop(&server);
}

#[test]
fn large_download_over_https_matches_by_sha256_and_keeps_the_connection() {
    let want = sha256(&big());
    let tls = start_tls(Server::builder(), handler);
    let client = Client::builder()
        .add_root_certificate_pem(&tls.pem)
        .build()
        .unwrap();
    let base = format!("https://localhost:{}", tls.server.local_addr().port());
    let got = download(&client, &format!("{base}/big"));
    assert_eq!(got, (want, BIG));
    for _ in 0..20 {
        let text = client
            .get(&format!("{base}/"))
            .send()
            .unwrap()
            .text()
            .unwrap();
        assert_eq!(text, "hello");
    }
    assert_eq!(tls.server.stats().accepted, 1);
    stop(&tls.server);
}

#[test]
fn a_fresh_connection_to_the_same_host_resumes_the_tls_session() {
    let tls = start_tls(Server::builder(), handler);
    // No idle connections kept: every request opens a new one.
    let client = Client::builder()
        .add_root_certificate_pem(&tls.pem)
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let secure = format!("https://localhost:{}/", tls.server.local_addr().port());
    let mut resumed = Vec::new();
    for _ in 0..3 {
        let r = client.get(&secure).send().unwrap();
        resumed.push(r.tls_resumed());
        assert_eq!(r.text().unwrap(), "hello");
    }
    assert_eq!(resumed, [Some(false), Some(true), Some(true)]);
    assert_eq!(tls.server.stats().accepted, 3, "one connection per request");
    let plain = start(Server::builder(), handler);
    let r = client.get(&url(&plain, "/")).send().unwrap();
    assert_eq!(r.tls_resumed(), None, "plain HTTP has no TLS session");
    stop(&plain);
    stop(&tls.server);
}

#[test]
fn sni_and_alpn_reach_the_server() {
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let pem = identity.certificate_pem().unwrap();
    let acceptor = TlsAcceptor::builder(identity)
        .alpn(&["h2", "http/1.1"])
        .build()
        .unwrap();
    let server = Server::builder()
        .listen_tls("127.0.0.1:0", acceptor)
        .shutdown_grace(TEST_GRACE)
        .start(handler)
        .unwrap();
    let client = Client::builder()
        .add_root_certificate_pem(&pem)
        .build()
        .unwrap();
    let url = format!("https://localhost:{}/tls", server.local_addr().port());
    let text = client.get(&url).send().unwrap().text().unwrap();
    assert_eq!(
        text, "localhost http/1.1",
        "SNI, and ALPN settled on http/1.1, never h2"
    );
    stop(&server);
}

#[test]
fn an_untrusted_certificate_is_refused_unless_told_otherwise() {
    let tls = start_tls(Server::builder(), handler);
    let url = format!("https://localhost:{}/", tls.server.local_addr().port());
    let err = Client::new().unwrap().get(&url).send().unwrap_err();
    assert!(matches!(err, Error::TlsVerify { .. }), "{err}");
    let insecure = Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    assert_eq!(insecure.get(&url).send().unwrap().text().unwrap(), "hello");
    stop(&tls.server);
}

/// Uploads the first 8 MiB of [`big`] from a file; returns the server's SHA-256 of what it got.
fn upload_file(client: &Client, url: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("upload.bin");
    std::fs::write(&path, &big()[..8 * 1024 * 1024]).unwrap();
    let file = moria_streams::File::open(&path).unwrap();
    let r = client.put(url).body_file(file).send().unwrap();
    assert_eq!(r.status(), 200);
    r.text().unwrap()
}

#[test]
fn file_uploads_use_sendfile_on_plain_tcp_and_reads_under_tls() {
    let want = sha256(&big()[..8 * 1024 * 1024]);
    let server = start(Server::builder().max_body(16 * 1024 * 1024), handler);
    let before = moria_streams::transfer::transfer_stats();
    let got = upload_file(&Client::new().unwrap(), &url(&server, "/sha256"));
    assert_eq!(got, want);
    let moved = moria_streams::transfer::transfer_stats().since(&before);
    assert!(moved.sendfile_bytes >= 8 * 1024 * 1024, "{moved:?}");
    stop(&server);

    let tls = start_tls(Server::builder().max_body(16 * 1024 * 1024), handler);
    let client = Client::builder()
        .add_root_certificate_pem(&tls.pem)
        .build()
        .unwrap();
    let port = tls.server.local_addr().port();
    let got = upload_file(&client, &format!("https://localhost:{port}/sha256"));
    assert_eq!(got, want);
    stop(&tls.server);
}
