//! When a TLS 1.3 server session leaves OpenSSL for Moria's record layer: at an idle moment
//! between records only (never while OpenSSL holds part of a record), and only while the
//! acceptor's connections tend to go idle (one-request connections skip the preparation).

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use moria_crypto::{Identity, TlsAcceptor};
use openssl::ssl::{SslConnector, SslMethod, SslStream, SslVerifyMode, SslVersion};

/// Turns a stuck connection into a failed test instead of a hung one.
const IO_TIMEOUT: Duration = Duration::from_secs(30);

fn acceptor() -> TlsAcceptor {
    TlsAcceptor::builder(Identity::self_signed(&["localhost"]).unwrap())
        .build()
        .unwrap()
}

/// A TLS 1.3 OpenSSL client over `sock`.
fn client<S: Read + Write + std::fmt::Debug>(sock: S) -> SslStream<S> {
    let mut builder = SslConnector::builder(SslMethod::tls_client()).unwrap();
    builder.set_verify(SslVerifyMode::NONE);
    builder
        .set_min_proto_version(Some(SslVersion::TLS1_3))
        .unwrap();
    builder.build().connect("localhost", sock).unwrap()
}

/// A socket that, when told, sends only the first bytes of its next write and keeps the rest.
#[derive(Debug)]
struct Hold {
    sock: TcpStream,
    /// How many bytes of the next write go out now.
    cut: Arc<Mutex<Option<usize>>>,
    held: Arc<Mutex<Vec<u8>>>,
}

impl Read for Hold {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.sock.read(buf)
    }
}

impl Write for Hold {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.cut.lock().unwrap().take() {
            Some(n) => {
                self.sock.write_all(&buf[..n])?;
                self.held.lock().unwrap().extend_from_slice(&buf[n..]);
                Ok(buf.len())
            }
            None => self.sock.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sock.flush()
    }
}

#[test]
fn a_session_waiting_inside_a_record_stays_with_openssl_until_the_next_idle() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (timed_out, go_on) = mpsc::channel();
    let (partly_sent, read_now) = mpsc::channel();
    let acceptor = acceptor();
    let server = thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        sock.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
        sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        let mut tls = acceptor.accept(sock).unwrap();
        let mut buf = [0u8; 64];
        let n = tls.read(&mut buf).unwrap();
        tls.write_all(&buf[..n]).unwrap();
        // The next record has arrived in part: OpenSSL reads its header and waits for the
        // rest, until this read gives up.
        read_now.recv().unwrap();
        tls.get_ref()
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let err = tls.read(&mut buf).unwrap_err();
        assert!(
            matches!(
                err.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
            "{err}"
        );
        tls.release_buffers();
        let inside = tls.records_by_moria();
        tls.get_ref().set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        timed_out.send(()).unwrap();
        let n = tls.read(&mut buf).unwrap();
        tls.write_all(&buf[..n]).unwrap();
        tls.release_buffers();
        let between = tls.records_by_moria();
        let n = tls.read(&mut buf).unwrap();
        tls.write_all(&buf[..n]).unwrap();
        (inside, between)
    });
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let mut raw = sock.try_clone().unwrap();
    let cut = Arc::new(Mutex::new(None));
    let held = Arc::new(Mutex::new(Vec::new()));
    let mut tls = client(Hold {
        sock,
        cut: cut.clone(),
        held: held.clone(),
    });
    let mut back = [0u8; 6];
    tls.write_all(b"first!").unwrap();
    tls.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"first!");
    *cut.lock().unwrap() = Some(9);
    tls.write_all(b"second").unwrap();
    partly_sent.send(()).unwrap();
    go_on.recv().unwrap();
    raw.write_all(&held.lock().unwrap()).unwrap();
    tls.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"second");
    tls.write_all(b"third!").unwrap();
    tls.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"third!");
    let (inside, between) = server.join().unwrap();
    assert!(!inside, "handed over while OpenSSL held part of a record");
    assert!(between, "handed over at the next idle");
}

/// Serves `count` connections one after the other, each answering one read; those numbered
/// in `idle` go idle (`release_buffers`) after it. Returns, per connection, whether Moria's
/// record layer carried it then.
fn serve(acceptor: &TlsAcceptor, count: usize, idle: impl Fn(usize) -> bool) -> Vec<bool> {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let clients = thread::spawn(move || {
        for _ in 0..count {
            let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
            sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
            let mut tls = client(sock);
            tls.write_all(b"ping").unwrap();
            let mut back = [0u8; 4];
            tls.read_exact(&mut back).unwrap();
            tls.shutdown().unwrap();
        }
    });
    let handed = (0..count)
        .map(|i| {
            let (sock, _) = listener.accept().unwrap();
            sock.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
            let mut tls = acceptor.accept(sock).unwrap();
            let mut buf = [0u8; 4];
            tls.read_exact(&mut buf).unwrap();
            tls.write_all(&buf).unwrap();
            if idle(i) {
                tls.release_buffers();
            }
            tls.records_by_moria()
        })
        .collect();
    clients.join().unwrap();
    handed
}

#[test]
fn one_request_connections_stop_preparing_the_handoff_and_idle_ones_bring_it_back() {
    let acceptor = acceptor();
    assert_eq!(
        serve(&acceptor, 1, |_| true),
        [true],
        "a fresh acceptor prepares"
    );
    // Forty connections that never go idle: new ones stop noting their secrets.
    assert!(!serve(&acceptor, 40, |_| false).contains(&true));
    let after = serve(&acceptor, 12, |_| true);
    assert!(
        !after[0],
        "the first idle one after them stays with OpenSSL"
    );
    assert!(
        after[11],
        "a few idle ones later, sessions are handed over again: {after:?}"
    );
}
