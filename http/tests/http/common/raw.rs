//! A raw-socket peer for client tests: a plain-thread server on 127.0.0.1:0 that hands each
//! accepted connection to a closure, and counts the connections it accepted.

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::CLIENT_TIMEOUT;

/// A running raw server.
pub struct RawServer {
    pub addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
}

impl RawServer {
    /// Accepts connections forever (the thread ends with the test process), running
    /// `serve(connection, index)` for each in a thread of its own; `index` counts from 0.
    pub fn start(serve: impl Fn(TcpStream, usize) + Send + Sync + 'static) -> RawServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        let serve = Arc::new(serve);
        std::thread::spawn(move || {
            for s in listener.incoming() {
                let Ok(s) = s else { continue };
                s.set_read_timeout(Some(CLIENT_TIMEOUT)).expect("timeout");
                let index = count.fetch_add(1, Ordering::SeqCst);
                let serve = Arc::clone(&serve);
                std::thread::spawn(move || serve(s, index));
            }
        });
        RawServer { addr, accepted }
    }

    /// A server that reads one request head per connection and answers `response` verbatim,
    /// then closes.
    pub fn answer(response: &'static [u8]) -> RawServer {
        RawServer::start(move |mut s, _| {
            if read_head(&mut s).is_some() {
                let _ = std::io::Write::write_all(&mut s, response);
            }
        })
    }

    /// `http://127.0.0.1:port{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// Reads one request head (up to the empty line) byte by byte; `None` at end of stream.
pub fn read_head(s: &mut impl Read) -> Option<String> {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => return None,
        }
    }
    String::from_utf8(head).ok()
}
