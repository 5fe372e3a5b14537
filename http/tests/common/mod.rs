//! Shared helpers for the integration tests: start a server on 127.0.0.1:0 and talk raw TCP.

#![allow(dead_code)]

pub mod files;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use moria_http::{Handler, Server, ServerBuilder};

/// How long a test client waits for an answer before calling the server hung.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(20);

/// Starts `handler` on an ephemeral port with the builder's settings.
pub fn start(builder: ServerBuilder, handler: impl Handler) -> Server {
    builder
        .listen("127.0.0.1:0")
        .start(handler)
        .expect("server starts")
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

/// Reads one response from `s` (Content-Length, chunked, or until close); `head_only` for
/// answers to HEAD.
pub fn read_response(s: &mut impl Read, head_only: bool) -> Option<Resp> {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(0) | Err(_) => return None,
            Ok(_) => head.push(b[0]),
        }
    }
    let head = String::from_utf8(head).expect("ascii head");
    let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
    let mut r = Resp {
        status,
        head,
        body: Vec::new(),
    };
    if head_only || status == 204 || status == 304 || (100..200).contains(&status) {
        return Some(r);
    }
    if let Some(n) = r.header("content-length") {
        let n: usize = n.parse().ok()?;
        r.body = vec![0; n];
        s.read_exact(&mut r.body).ok()?;
    } else if r
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        r.body = read_chunked(s)?;
    } else {
        s.read_to_end(&mut r.body).ok()?;
    }
    Some(r)
}

fn read_line(s: &mut impl Read) -> Option<String> {
    let mut line = Vec::new();
    let mut b = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        if s.read(&mut b).ok()? == 0 {
            return None;
        }
        line.push(b[0]);
    }
    line.truncate(line.len() - 2);
    String::from_utf8(line).ok()
}

fn read_chunked(s: &mut impl Read) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let size = usize::from_str_radix(read_line(s)?.split(';').next()?.trim(), 16).ok()?;
        if size == 0 {
            while !read_line(s)?.is_empty() {}
            return Some(out);
        }
        let start = out.len();
        out.resize(start + size, 0);
        s.read_exact(&mut out[start..]).ok()?;
        read_line(s)?;
    }
}

/// Sends `raw` on a new connection and reads one response.
pub fn exchange(addr: SocketAddr, raw: &[u8]) -> Resp {
    let mut s = connect(addr);
    s.write_all(raw).unwrap();
    read_response(&mut s, false).expect("a response")
}

/// Whether the server closed the connection (EOF within the client timeout).
pub fn is_closed(s: &mut TcpStream) -> bool {
    let mut b = [0u8; 1];
    matches!(s.read(&mut b), Ok(0) | Err(_))
}
