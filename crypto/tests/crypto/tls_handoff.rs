//! TLS 1.3 server sessions handed from OpenSSL to Moria's record layer after the handshake,
//! against OpenSSL clients: every TLS 1.3 suite, records of every size, idle periods
//! (`TlsStream::release_buffers`) between them, KeyUpdates both ways, close_notify both ways,
//! what the handshake established, and records that must be refused.

use std::ffi::c_int;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crate::common::pattern;
use foreign_types::ForeignTypeRef;
use moria_crypto::{hash, Identity, TlsAcceptor};
use openssl::ssl::{SslConnector, SslMethod, SslStream, SslVerifyMode, SslVersion};

/// Turns a stuck connection into a failed test instead of a hung one.
const IO_TIMEOUT: Duration = Duration::from_secs(30);
/// `SSL_KEY_UPDATE_NOT_REQUESTED`, `SSL_KEY_UPDATE_REQUESTED`.
const KEY_UPDATE_NOT_REQUESTED: c_int = 0;
const KEY_UPDATE_REQUESTED: c_int = 1;

extern "C" {
    fn SSL_key_update(s: *mut openssl_sys::SSL, updatetype: c_int) -> c_int;
}

/// What the server saw on its connection.
#[derive(Debug)]
struct Served {
    echoed: u64,
    /// Reads that returned data, and those done while Moria's record layer carried the session.
    reads: u64,
    moria_reads: u64,
    facts_before: (
        Option<String>,
        Option<Vec<u8>>,
        &'static str,
        Option<&'static str>,
    ),
    facts_after: (
        Option<String>,
        Option<Vec<u8>>,
        &'static str,
        Option<&'static str>,
    ),
}

/// Serves one connection: echoes what it reads, going idle (`release_buffers`) after each read,
/// until close_notify, then answers it.
fn echo_server(acceptor: TlsAcceptor) -> (u16, thread::JoinHandle<io::Result<Served>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = thread::spawn(move || {
        let (sock, _) = listener.accept()?;
        sock.set_read_timeout(Some(IO_TIMEOUT))?;
        sock.set_write_timeout(Some(IO_TIMEOUT))?;
        let mut tls = acceptor.accept(sock).map_err(io::Error::other)?;
        let facts = |t: &moria_crypto::TlsStream<TcpStream>| {
            (
                t.server_name().map(str::to_owned),
                t.alpn_protocol().map(<[u8]>::to_vec),
                t.version(),
                t.cipher(),
            )
        };
        let facts_before = facts(&tls);
        let mut buf = vec![0u8; 24 * 1024];
        let (mut echoed, mut reads, mut moria_reads) = (0, 0, 0);
        loop {
            let n = tls.read(&mut buf)?;
            if n == 0 {
                tls.shutdown()?;
                return Ok(Served {
                    echoed,
                    reads,
                    moria_reads,
                    facts_before,
                    facts_after: facts(&tls),
                });
            }
            tls.write_all(&buf[..n])?;
            tls.release_buffers();
            reads += 1;
            moria_reads += u64::from(tls.records_by_moria());
            echoed += n as u64;
        }
    });
    (port, server)
}

fn acceptor() -> TlsAcceptor {
    TlsAcceptor::builder(Identity::self_signed(&["localhost"]).unwrap())
        .alpn(&["http/1.1"])
        .build()
        .unwrap()
}

/// An OpenSSL client on a plain socket, TLS 1.3 with `suite` only.
fn client(port: u16, suite: &str) -> SslStream<TcpStream> {
    let mut builder = SslConnector::builder(SslMethod::tls_client()).unwrap();
    builder.set_verify(SslVerifyMode::NONE);
    builder
        .set_min_proto_version(Some(SslVersion::TLS1_3))
        .unwrap();
    builder.set_ciphersuites(suite).unwrap();
    builder.set_alpn_protos(b"\x08http/1.1").unwrap();
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    sock.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    builder
        .build()
        .connect("localhost", sock)
        .expect("TLS handshake")
}

/// Sends `piece` and reads its echo.
fn exchange(tls: &mut SslStream<TcpStream>, piece: &[u8]) -> Vec<u8> {
    tls.write_all(piece).unwrap();
    let mut back = vec![0u8; piece.len()];
    tls.read_exact(&mut back).unwrap();
    back
}

fn key_update(tls: &mut SslStream<TcpStream>, kind: c_int) {
    // SAFETY: the session is live and TLS 1.3; OpenSSL sends the KeyUpdate with the next write.
    let ok = unsafe { SSL_key_update(tls.ssl().as_ptr(), kind) };
    assert_eq!(ok, 1, "SSL_key_update");
}

#[test]
fn idle_sessions_carry_on_in_every_suite_with_key_updates_both_ways() {
    for suite in [
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256",
    ] {
        let (port, server) = echo_server(acceptor());
        let mut tls = client(port, suite);
        let sizes = [1, 100, 5_000, 16_384, 16_385, 40_000, 3];
        let mut sent = 0u64;
        for round in 0..60 {
            match round {
                20 => key_update(&mut tls, KEY_UPDATE_NOT_REQUESTED),
                40 => key_update(&mut tls, KEY_UPDATE_REQUESTED),
                _ => {}
            }
            let piece = pattern(sizes[round % sizes.len()], round as u32);
            let back = exchange(&mut tls, &piece);
            assert!(back == piece, "{suite}: round {round} came back changed");
            sent += piece.len() as u64;
        }
        // The session ends with close_notify both ways.
        tls.shutdown().unwrap();
        let mut rest = Vec::new();
        tls.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
        let served = server.join().unwrap().unwrap();
        assert_eq!(served.echoed, sent, "{suite}");
        assert_eq!(
            served.moria_reads, served.reads,
            "{suite}: the session was handed over after the handshake: {served:?}"
        );
        assert_eq!(served.facts_before, served.facts_after, "{suite}");
        assert_eq!(served.facts_after.3, Some(suite));
        assert_eq!(served.facts_after.1.as_deref(), Some(&b"http/1.1"[..]));
        assert_eq!(served.facts_after.0.as_deref(), Some("localhost"));
    }
}

#[test]
fn a_megabyte_each_way_after_the_handoff_is_unchanged() {
    let (port, server) = echo_server(acceptor());
    let mut tls = client(port, "TLS_AES_128_GCM_SHA256");
    assert_eq!(exchange(&mut tls, b"hello"), b"hello");
    let payload = pattern(1 << 20, 7);
    let mut back = Vec::with_capacity(payload.len());
    for piece in payload.chunks(10_000) {
        back.extend(exchange(&mut tls, piece));
    }
    assert_eq!(
        hash("sha256", &back).unwrap().to_hex(),
        hash("sha256", &payload).unwrap().to_hex()
    );
    tls.shutdown().unwrap();
    let mut rest = Vec::new();
    tls.read_to_end(&mut rest).unwrap();
    let served = server.join().unwrap().unwrap();
    assert!(served.moria_reads > 0 && served.moria_reads == served.reads);
}

/// A socket that flips one bit of the next write when told to.
#[derive(Debug)]
struct Tamper {
    sock: TcpStream,
    armed: Arc<AtomicBool>,
}

impl Read for Tamper {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.sock.read(buf)
    }
}

impl Write for Tamper {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.armed.swap(false, Ordering::SeqCst) {
            let mut bad = buf.to_vec();
            let last = bad.len() - 1;
            bad[last] ^= 1;
            self.sock.write_all(&bad)?;
            return Ok(buf.len());
        }
        self.sock.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sock.flush()
    }
}

#[test]
fn a_tampered_record_after_the_handoff_fails_the_read() {
    let (port, server) = echo_server(acceptor());
    let armed = Arc::new(AtomicBool::new(false));
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let mut builder = SslConnector::builder(SslMethod::tls_client()).unwrap();
    builder.set_verify(SslVerifyMode::NONE);
    let mut tls = builder
        .build()
        .connect(
            "localhost",
            Tamper {
                sock,
                armed: armed.clone(),
            },
        )
        .unwrap();
    for _ in 0..3 {
        tls.write_all(b"fine").unwrap();
        let mut back = [0u8; 4];
        tls.read_exact(&mut back).unwrap();
    }
    armed.store(true, Ordering::SeqCst);
    tls.write_all(b"changed on the way").unwrap();
    let err = server.join().unwrap().unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
    assert!(err.to_string().contains("bad_record_mac"), "{err}");
}

#[test]
fn sessions_stay_with_openssl_where_they_must() {
    // TLS 1.2: no handoff, and everything still works.
    let (port, server) = echo_server(acceptor());
    let mut builder = SslConnector::builder(SslMethod::tls_client()).unwrap();
    builder.set_verify(SslVerifyMode::NONE);
    builder
        .set_max_proto_version(Some(SslVersion::TLS1_2))
        .unwrap();
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let mut tls = builder.build().connect("localhost", sock).unwrap();
    for round in 0..5u32 {
        let piece = pattern(3000, round);
        assert!(exchange(&mut tls, &piece) == piece);
    }
    tls.shutdown().unwrap();
    let mut rest = Vec::new();
    tls.read_to_end(&mut rest).unwrap();
    let served = server.join().unwrap().unwrap();
    assert_eq!(served.moria_reads, 0, "TLS 1.2 stays with OpenSSL");
    assert_eq!(served.facts_after.2, "TLSv1.2");
}
