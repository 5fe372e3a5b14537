//! The client against nginx as origin (started by the test with a generated configuration):
//! a 4 MiB file by SHA-256, keep-alive reuse proven by nginx's own connection serial number,
//! gzip, HEAD, a conditional 304, a byte range, a redirect and a 404.

use std::fs;
use std::path::Path;

use crate::common::peer::Peer;
use moria_crypto::Hasher;
use moria_http::client::Client;

fn config(dir: &Path, port: u16) -> String {
    let d = dir.display();
    format!(
        "daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    types {{ text/plain txt; application/octet-stream bin; }}
    server {{
        listen 127.0.0.1:{port};
        root {d}/www;
        gzip on;
        gzip_min_length 1;
        gzip_types text/plain;
        add_header X-Connection $connection always;
        location = /moved {{ return 302 /hello.txt; }}
    }}
}}
"
    )
}

fn start_nginx() -> Peer {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = &dir.path().to_owned();
    fs::create_dir_all(d.join("tmp")).unwrap();
    fs::create_dir_all(d.join("www")).unwrap();
    fs::write(d.join("www/hello.txt"), "hello from nginx\n".repeat(200)).unwrap();
    fs::write(d.join("www/big.bin"), big()).unwrap();
    let port = moria_runtime::net::spare_port().expect("spare port");
    fs::write(d.join("nginx.conf"), config(d, port)).unwrap();
    let (conf, log) = (d.join("nginx.conf"), d.join("error.log"));
    let args = [
        Path::new("-p"),
        d,
        Path::new("-c"),
        &conf,
        Path::new("-e"),
        &log,
    ];
    Peer::start("nginx", "nginx", &args, port, dir)
}

/// 4 MiB that differ everywhere.
fn big() -> Vec<u8> {
    (0u32..1024 * 1024)
        .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
        .collect()
}

fn sha256(data: &[u8]) -> String {
    let mut h = Hasher::new("sha256").unwrap();
    h.update(data).unwrap();
    h.finish().unwrap().to_hex()
}

#[test]
fn the_client_against_nginx() {
    let nginx = start_nginx();
    let client = Client::new().unwrap();
    let at = |path: &str| format!("http://127.0.0.1:{}{path}", nginx.port);

    let r = client.get(&at("/big.bin")).send().unwrap();
    let conn = r.headers().get("x-connection").unwrap().to_owned();
    assert_eq!(sha256(&r.bytes().unwrap()), sha256(&big()));

    let raw = client
        .get(&at("/hello.txt"))
        .header("Accept-Encoding", "gzip")
        .send()
        .unwrap();
    assert_eq!(raw.headers().get("content-encoding"), Some("gzip"));
    assert_eq!(&raw.bytes().unwrap()[..2], b"\x1f\x8b");

    let r = client.get(&at("/hello.txt")).send().unwrap();
    assert_eq!(r.headers().get("content-encoding"), None, "decoded");
    assert_eq!(
        r.headers().get("x-connection"),
        Some(conn.as_str()),
        "reused"
    );
    let etag = r.headers().get("etag").map(str::to_owned);
    assert_eq!(r.text().unwrap(), "hello from nginx\n".repeat(200));

    let r = client.head(&at("/big.bin")).send().unwrap();
    assert_eq!(r.headers().get("content-length"), Some("4194304"));
    assert_eq!(r.bytes().unwrap(), b"");

    if let Some(etag) = etag {
        let r = client
            .get(&at("/hello.txt"))
            .header("If-None-Match", &etag)
            .send()
            .unwrap();
        assert_eq!(r.status(), 304);
        assert_eq!(r.bytes().unwrap(), b"");
    }

    let r = client
        .get(&at("/big.bin"))
        .header("Range", "bytes=100-199")
        .send()
        .unwrap();
    assert_eq!(r.status(), 206);
    assert_eq!(r.bytes().unwrap(), &big()[100..200]);

    let r = client.get(&at("/moved")).send().unwrap();
    assert!(r.url().to_string().ends_with("/hello.txt"));
    assert_eq!(r.text().unwrap(), "hello from nginx\n".repeat(200));

    let r = client.get(&at("/missing")).send().unwrap();
    assert_eq!(r.status(), 404);
    r.bytes().unwrap();

    let r = client.get(&at("/hello.txt")).send().unwrap();
    assert_eq!(
        r.headers().get("x-connection"),
        Some(conn.as_str()),
        "every request above rode one connection"
    );
}
