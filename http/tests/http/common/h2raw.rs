//! A hostile HTTP/2 client over a plain `TcpStream`: raw frames out (with a tiny HPACK
//! encoder: static indexes and plain literals), frames in, and the ends the tests expect
//! (a GOAWAY's code, a stream's RST_STREAM code).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};

use super::connect;

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

pub const END_STREAM: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;

pub const PROTOCOL_ERROR: u32 = 0x1;
pub const FLOW_CONTROL_ERROR: u32 = 0x3;
pub const REFUSED_STREAM: u32 = 0x7;
pub const CANCEL: u32 = 0x8;
pub const ENHANCE_YOUR_CALM: u32 = 0xb;

/// One frame read back.
#[derive(Debug)]
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

/// A raw HTTP/2 connection (h2c with prior knowledge).
pub struct H2Raw {
    s: TcpStream,
}

impl H2Raw {
    /// Connects, sends the preface and an empty SETTINGS.
    pub fn connect(addr: SocketAddr) -> H2Raw {
        Self::with_settings(addr, &[])
    }

    /// Connects, sends the preface and SETTINGS with `settings` (id, value).
    pub fn with_settings(addr: SocketAddr, settings: &[(u16, u32)]) -> H2Raw {
        let mut c = H2Raw { s: connect(addr) };
        c.s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
        let mut p = Vec::new();
        for (id, v) in settings {
            p.extend_from_slice(&id.to_be_bytes());
            p.extend_from_slice(&v.to_be_bytes());
        }
        c.frame(SETTINGS, 0, 0, &p);
        c
    }

    /// Sends one frame (a write error, once the server has closed, is ignored).
    pub fn frame(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
        let _ = self.s.write_all(&frame_bytes(kind, flags, stream, payload));
    }

    /// Sends raw bytes.
    pub fn raw(&mut self, bytes: &[u8]) {
        let _ = self.s.write_all(bytes);
    }

    /// Opens stream `id` with `GET path` (plus `extra` literal fields).
    pub fn get(&mut self, id: u32, path: &str, end_stream: bool, extra: &[(&str, &str)]) {
        let block = request_block("GET", path, extra);
        let flags = END_HEADERS | if end_stream { END_STREAM } else { 0 };
        self.frame(HEADERS, flags, id, &block);
    }

    /// The next frame; `None` once the server closed the connection.
    pub fn read(&mut self) -> Option<Frame> {
        let mut h = [0u8; 9];
        self.s.read_exact(&mut h).ok()?;
        let len = (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
        let mut payload = vec![0; len];
        self.s.read_exact(&mut payload).ok()?;
        Some(Frame {
            kind: h[3],
            flags: h[4],
            stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff,
            payload,
        })
    }

    /// Reads until a GOAWAY; returns its (last stream id, code). Fails if the connection
    /// closes without one.
    pub fn goaway(&mut self) -> (u32, u32) {
        while let Some(f) = self.read() {
            if f.kind == GOAWAY {
                return (be32(&f.payload[..4]), be32(&f.payload[4..8]));
            }
        }
        panic!("the connection closed without a GOAWAY");
    }

    /// Reads until the frame that ends `stream` (END_STREAM).
    pub fn until_end(&mut self, stream: u32) {
        while let Some(f) = self.read() {
            if f.stream == stream && f.flags & END_STREAM != 0 {
                return;
            }
        }
        panic!("the connection closed before stream {stream} ended");
    }

    /// Reads until a RST_STREAM on `stream`; returns its code.
    pub fn rst(&mut self, stream: u32) -> u32 {
        while let Some(f) = self.read() {
            if f.kind == RST_STREAM && f.stream == stream {
                return be32(&f.payload);
            }
            assert_ne!(
                f.kind, GOAWAY,
                "GOAWAY before the reset of stream {stream}: {f:?}"
            );
        }
        panic!("the connection closed before stream {stream} was reset");
    }

    /// Reads until a HEADERS on `stream`; returns its block.
    pub fn response_block(&mut self, stream: u32) -> Vec<u8> {
        while let Some(f) = self.read() {
            if f.kind == HEADERS && f.stream == stream {
                return f.payload;
            }
            assert_ne!(
                f.kind, GOAWAY,
                "GOAWAY before the answer on {stream}: {f:?}"
            );
            assert_ne!(f.kind, RST_STREAM, "stream reset: {f:?}");
        }
        panic!("the connection closed before stream {stream} was answered");
    }
}

/// A frame's bytes.
pub fn frame_bytes(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let l = (payload.len() as u32).to_be_bytes();
    let mut b = vec![l[1], l[2], l[3], kind, flags];
    b.extend_from_slice(&stream.to_be_bytes());
    b.extend_from_slice(payload);
    b
}

/// A request header block: `:method`, `:scheme http`, `:path`, `:authority localhost`, then
/// `extra`, all literals without indexing except the static `:scheme`.
pub fn request_block(method: &str, path: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut b = Vec::new();
    literal(&mut b, 2, "", method);
    b.push(0x86);
    literal(&mut b, 4, "", path);
    literal(&mut b, 1, "", "localhost");
    for (n, v) in extra {
        literal(&mut b, 0, n, v);
    }
    b
}

/// A literal field without indexing: by static name index, or with a new name (index 0).
pub fn literal(b: &mut Vec<u8>, index: u8, name: &str, value: &str) {
    b.push(index);
    if index == 0 {
        string(b, name.as_bytes());
    }
    string(b, value.as_bytes());
}

/// An HPACK string literal, no Huffman (lengths below 127 only, or the long form).
pub fn string(b: &mut Vec<u8>, s: &[u8]) {
    int(b, s.len(), 7, 0);
    b.extend_from_slice(s);
}

/// An HPACK integer with a `prefix`-bit prefix under `bits`.
pub fn int(b: &mut Vec<u8>, mut v: usize, prefix: u8, bits: u8) {
    let max = (1usize << prefix) - 1;
    if v < max {
        b.push(bits | v as u8);
        return;
    }
    b.push(bits | max as u8);
    v -= max;
    while v >= 128 {
        b.push((v % 128 + 128) as u8);
        v /= 128;
    }
    b.push(v as u8);
}

/// The big-endian `u32` in the first four bytes of `b`.
pub fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}
