//! Shared helpers for the integration tests: start a server on 127.0.0.1:0, talk raw TCP (or
//! TLS), and assert what the server did with the connection: answered, closed, or shut down
//! without waiting for the grace period. See "Writing a connection-level test" in the crate
//! README.

pub mod curl;
pub mod files;
pub mod h2;
pub mod h2raw;
pub mod peer;
pub mod process;
pub mod raw;
pub mod tls;
pub mod ws;

use std::io::{BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use moria_crypto::TlsStream;
use moria_http::{client, Handler, Server, ServerBuilder};

/// How long a test client waits for an answer before calling the server hung.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a client waits to see the server close a connection that it must close.
pub const CLOSE_WAIT: Duration = Duration::from_secs(5);
/// The grace period of the servers that [`start`] starts: far above [`SHUTDOWN_BOUND`], so a
/// shutdown that ends within the bound cannot have gone through the grace-period path.
pub const TEST_GRACE: Duration = Duration::from_secs(600);
/// How long [`stop`] lets a shutdown take before it calls the connections unwoken.
pub const SHUTDOWN_BOUND: Duration = Duration::from_secs(20);

/// Starts `handler` on an ephemeral port with the builder's settings and [`TEST_GRACE`].
pub fn start(builder: ServerBuilder, handler: impl Handler) -> Server {
    builder
        .listen("127.0.0.1:0")
        .shutdown_grace(TEST_GRACE)
        .start(handler)
        .expect("server starts")
}

/// Shuts `server` down and fails the test unless every connection was woken and closed at
/// once: a shutdown that ran into the grace period (started with [`TEST_GRACE`]) or aborted a
/// connection is a failure, whatever the connections were doing.
pub fn stop(server: &Server) {
    let live = server.connections();
    server.shutdown_token().trigger();
    match server.wait_timeout(SHUTDOWN_BOUND) {
        Some(report) => assert!(
            report.is_graceful(),
            "shutdown aborted {} connections after the grace period",
            report.aborted
        ),
        None => panic!(
            "shutdown still waiting after {SHUTDOWN_BOUND:?} ({live} connections open when it \
             began, {} now): connections were not woken, the grace-period path is running",
            server.connections()
        ),
    }
}

/// `http://{server's address}{path}`, for the client tests.
pub fn url(server: &Server, path: &str) -> String {
    format!("http://{}{path}", server.local_addr())
}

/// A raw client connection with a read timeout (so a hang fails the test instead of blocking).
pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(CLIENT_TIMEOUT)).unwrap();
    s.set_nodelay(true).unwrap();
    s
}

/// One parsed response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Resp {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Largest body [`read_response`] accepts.
pub const MAX_TEST_BODY: u64 = 1 << 30;

/// Reads one response from `s` with the client's decoder (Content-Length, chunked, or until
/// close; strict framing), leaving any following bytes in `s`; `head_only` for answers to
/// HEAD. `None` when the connection ends or the response breaks HTTP/1.1.
pub fn read_response(s: &mut (impl Read + ?Sized), head_only: bool) -> Option<Resp> {
    let mut exact = BufReader::with_capacity(1, s);
    let r = client::read_response(&mut exact, head_only, MAX_TEST_BODY).ok()?;
    Some(Resp {
        status: r.status,
        head: String::from_utf8(r.head).expect("ascii head"),
        body: r.body,
    })
}

/// `GET http://{addr}{path}` with a fresh [`client::Client`], the body still to read.
pub fn get(addr: SocketAddr, path: &str) -> client::Response {
    let client = client::Client::new().expect("client");
    client
        .get(&format!("http://{addr}{path}"))
        .send()
        .unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// Sends `raw` on a new connection and reads one response.
pub fn exchange(addr: SocketAddr, raw: &[u8]) -> Resp {
    let mut s = connect(addr);
    s.write_all(raw).unwrap();
    read_response(&mut s, false).expect("a response")
}

/// A client connection whose read timeout a test can set: plain TCP or TLS over it.
pub trait ClientConn: Read + Write {
    /// Sets the read timeout of the underlying socket.
    fn set_timeout(&mut self, d: Duration);
}

impl ClientConn for TcpStream {
    fn set_timeout(&mut self, d: Duration) {
        self.set_read_timeout(Some(d)).expect("set_read_timeout");
    }
}

impl ClientConn for TlsStream<TcpStream> {
    fn set_timeout(&mut self, d: Duration) {
        self.get_mut().set_timeout(d);
    }
}

/// Waits up to [`CLOSE_WAIT`] for the server to end the connection: `Ok` on EOF (with or
/// without TLS close_notify) or reset; `Err` says what happened instead (still open, or bytes
/// the test did not expect).
pub fn check_closed(s: &mut dyn ClientConn) -> Result<(), String> {
    s.set_timeout(CLOSE_WAIT);
    let mut b = [0u8; 256];
    let r = s.read(&mut b);
    s.set_timeout(CLIENT_TIMEOUT);
    match r {
        Ok(0) => Ok(()),
        Ok(n) => Err(format!(
            "expected the server to close the connection; it sent {:?}",
            String::from_utf8_lossy(&b[..n])
        )),
        Err(e) => match e.kind() {
            ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::UnexpectedEof => Ok(()),
            ErrorKind::WouldBlock | ErrorKind::TimedOut => Err(format!(
                "the server kept the connection open for {CLOSE_WAIT:?} when it should have \
                 closed it"
            )),
            _ => Err(format!("reading for the close failed: {e}")),
        },
    }
}

/// Everything the server sends until it ends the connection (EOF, reset, or TLS without
/// close_notify); fails if the server goes quiet for [`CLOSE_WAIT`] without closing.
pub fn read_until_closed(s: &mut dyn ClientConn) -> Vec<u8> {
    s.set_timeout(CLOSE_WAIT);
    let mut out = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => match e.kind() {
                ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::UnexpectedEof => break,
                ErrorKind::WouldBlock | ErrorKind::TimedOut => panic!(
                    "the server went quiet for {CLOSE_WAIT:?} after {} bytes without closing the \
                     connection",
                    out.len()
                ),
                _ => panic!(
                    "reading until the close failed after {} bytes: {e}",
                    out.len()
                ),
            },
        }
    }
    s.set_timeout(CLIENT_TIMEOUT);
    out
}

/// Asserts that the server closes the connection (see [`check_closed`]).
#[track_caller]
pub fn assert_closed(s: &mut dyn ClientConn) {
    if let Err(why) = check_closed(s) {
        panic!("{why}");
    }
}

/// Polls `done` until it holds, failing the test (naming `what`) after [`CLIENT_TIMEOUT`].
/// For states a test cannot be told about, such as the server giving up on a connection.
#[track_caller]
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + CLIENT_TIMEOUT;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "still waiting after {CLIENT_TIMEOUT:?} for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
