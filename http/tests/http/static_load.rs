//! StaticFiles under load: a 100 MiB file by sendfile (plain HTTP) and through TLS, checked
//! with SHA-256; 500 concurrent keep-alive clients fetching the 1312-byte file of Mordor's
//! siege benchmark, every answer checked, none may fail. The transfer counters show which path
//! each big body took: sendfile on plain TCP, offloaded buffered reads under TLS. (The other
//! test here serves only small files, which are read into the response, never transferred.) The 100 MiB test runs in a process of its own (`common::process`): the
//! transfer counters are the process's.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::files::{small_bytes, tree, SMALL_LEN};
use crate::common::process::own_process;
use crate::common::*;
use moria_crypto::{Hasher, TlsAcceptor, TlsConnector};
use moria_http::{Server, StaticFiles};
use moria_streams::transfer::{transfer_stats, TransferStats};

const BIG: usize = 100 * 1024 * 1024;

/// Writes a 100 MiB file of pseudo-random bytes and returns its SHA-256.
fn write_big(path: &std::path::Path) -> String {
    let mut h = Hasher::new("sha256").unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut block = vec![0u8; 1024 * 1024];
    for _ in 0..BIG / block.len() {
        for b in block.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b.copy_from_slice(&x.to_le_bytes());
        }
        h.update(&block).unwrap();
        f.write_all(&block).unwrap();
    }
    f.flush().unwrap();
    h.finish().unwrap().to_hex()
}

/// Sends a GET for `/big.bin` and hashes the body as it streams in.
fn fetch_hash(s: &mut impl Read, w: &mut impl Write) -> (String, u64) {
    w.write_all(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut b).unwrap(), 1, "connection closed in the head");
        head.push(b[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.contains(&format!("Content-Length: {BIG}\r\n")),
        "{head}"
    );
    let mut h = Hasher::new("sha256").unwrap();
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        let n = s.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        h.update(&buf[..n]).unwrap();
        total += n as u64;
    }
    (h.finish().unwrap().to_hex(), total)
}

#[test]
fn hundred_mib_by_sendfile_and_over_tls() {
    // The transfer counters are the process's: no other test may move bytes meanwhile.
    if !own_process(module_path!(), "hundred_mib_by_sendfile_and_over_tls") {
        return;
    }
    let t = tree();
    let want = write_big(&t.path("big.bin"));
    let acceptor = TlsAcceptor::self_signed(&["localhost"]).unwrap();
    let pem = acceptor.certificate_pem().unwrap();
    let server = Server::builder()
        .listen("127.0.0.1:0")
        .listen_tls("127.0.0.1:0", acceptor)
        .start(StaticFiles::new(t.root()).unwrap())
        .unwrap();

    let before = transfer_stats();
    let mut plain = connect(server.local_addrs()[0]);
    let mut w = plain.try_clone().unwrap();
    // `Connection: close`: the body ends when the server closes, after its transfer returned.
    assert_eq!(fetch_hash(&mut plain, &mut w), (want.clone(), BIG as u64));
    let by_sendfile = TransferStats {
        sendfile_transfers: 1,
        sendfile_bytes: BIG as u64,
        ..TransferStats::default()
    };
    assert_eq!(transfer_stats().since(&before), by_sendfile);

    let connector = TlsConnector::builder()
        .add_root_certificate_pem(&pem)
        .build()
        .unwrap();
    let before = transfer_stats();
    let tcp = connect(server.local_addrs()[1]);
    let mut tls = connector.connect("localhost", tcp).unwrap();
    tls.write_all(b"GET /big.bin HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    // A close_notify-less end is fine for this check: count what arrived.
    let all = read_until_closed(&mut tls);
    let split = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&all[..split]).into_owned();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(all.len() - split, BIG);
    let got = moria_crypto::hash("sha256", &all[split..])
        .unwrap()
        .to_hex();
    assert_eq!(got, want);
    let buffered = TransferStats {
        buffered_transfers: 1,
        buffered_bytes: BIG as u64,
        ..TransferStats::default()
    };
    assert_eq!(transfer_stats().since(&before), buffered);
    stop(&server);
}

#[test]
fn five_hundred_keep_alive_clients_fetch_the_small_file() {
    const CLIENTS: usize = 500;
    const REQUESTS: usize = 20;
    let t = tree();
    let server = crate::common::files::serve(&t.root(), |b| b);
    let addr = server.local_addr();
    let expected = Arc::new(small_bytes());
    let ok = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(std::sync::Barrier::new(CLIENTS));
    let threads: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (expected, ok, barrier) = (expected.clone(), ok.clone(), barrier.clone());
            std::thread::Builder::new()
                .stack_size(128 * 1024)
                .spawn(move || {
                    let mut s: TcpStream = connect(addr);
                    barrier.wait();
                    for _ in 0..REQUESTS {
                        s.write_all(b"GET /small.bin HTTP/1.1\r\nHost: localhost\r\n\r\n")
                            .unwrap();
                        let r = read_response(&mut s, false).expect("an answer");
                        assert_eq!(r.status, 200);
                        assert_eq!(r.body.len(), SMALL_LEN);
                        assert!(r.body == *expected);
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                })
                .unwrap()
        })
        .collect();
    let failed = threads.into_iter().filter_map(|t| t.join().err()).count();
    assert_eq!(failed, 0, "{failed} clients failed");
    assert_eq!(ok.load(Ordering::Relaxed), CLIENTS * REQUESTS);
    assert_eq!(
        exchange(addr, b"GET /hello.txt HTTP/1.1\r\nHost: a\r\n\r\n").status,
        200
    );
    stop(&server);
}
