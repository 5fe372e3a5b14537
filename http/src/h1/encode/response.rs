//! Response head encoding into the connection's write buffer: the server role's head, from a
//! [`HeadToSend`] whose field lines were validated as they were set (with
//! `moria_streams::http_grammar::{is_token, is_field_value}`), through a [`HeadEncoder`] that
//! keeps the common lines pre-rendered.

use super::Length;
use crate::http_date;
use crate::status;

/// Flags for header fields whose presence changes what the server adds.
pub(crate) mod has {
    /// `Date` (the cached one is left out).
    pub const DATE: u8 = 1;
    /// `Server` (the server's own line is left out).
    pub const SERVER: u8 = 2;
    /// `Content-Type`.
    pub const CONTENT_TYPE: u8 = 4;
    /// `Content-Encoding` (no compression on top).
    pub const CONTENT_ENCODING: u8 = 8;
    /// `Vary`.
    pub const VARY: u8 = 16;
}

/// A response head to send: the codec's own type, which the application's `Response` holds
/// and fills as its fields are set, so the encoder reads it in place (no copy, no view built
/// per response).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeadToSend {
    /// The status code (100..=999).
    pub status: u16,
    /// A reason phrase other than the status's usual one.
    pub reason: Option<&'static str>,
    /// The header field lines, each `Name: value` and CR LF (no framing fields among them).
    pub fields: Vec<u8>,
    /// Which notable fields are among them ([`has`] flags).
    pub has: u8,
}

impl HeadToSend {
    /// `200` with no fields, with room for `capacity` bytes of field lines.
    pub(crate) fn with_capacity(capacity: usize) -> HeadToSend {
        HeadToSend {
            status: 200,
            reason: None,
            fields: Vec::with_capacity(capacity),
            has: 0,
        }
    }

    /// Back to `200` with no fields, keeping the capacity.
    pub(crate) fn clear(&mut self) {
        self.status = 200;
        self.reason = None;
        self.fields.clear();
        self.has = 0;
    }
}

/// What the `Connection` header must say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnHeader {
    /// Nothing (HTTP/1.1 keep-alive is the default).
    None,
    /// `Connection: keep-alive` (HTTP/1.0 client that asked for it).
    KeepAlive,
    /// `Connection: close`.
    Close,
}

/// Room reserved up front for the framing and connection lines and the final CR LF.
const TAIL_RESERVE: usize = 64;

/// What a rendered prefix depends on: the status line, the server's own line, whether the
/// handler set `Date` or `Server` itself, and the second the date says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PrefixKey {
    status: u16,
    /// The reason's address and length (compared as a pointer: a miss renders again).
    reason: Option<(usize, usize)>,
    /// The server line's address and length (the server's one line, never its bytes).
    server: Option<(usize, usize)>,
    has: u8,
    secs: u64,
}

/// A response head's common lines, rendered once and copied for every response that shares
/// them: the status line, `Server`, `Date` (re-rendered when the second changes) and the
/// framing line (when the length changes). A pipelined batch of like answers costs one copy
/// per head; anything else renders the block again, so it is never wrong, only slower.
#[derive(Debug, Default)]
pub(crate) struct HeadEncoder {
    /// The prefix's key; `None` until the first head.
    prefix: Option<PrefixKey>,
    /// The framing the line after the prefix declares.
    length: Option<Length>,
    /// The prefix's bytes, then the framing line's.
    block: Vec<u8>,
    /// Where the framing line starts in `block`.
    prefix_len: usize,
}

impl HeadEncoder {
    /// Appends the status line and header section of `res` to `out`; `date` is the IMF-fixdate
    /// of `secs`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn encode(
        &mut self,
        out: &mut Vec<u8>,
        res: &HeadToSend,
        secs: u64,
        date: &[u8; http_date::LEN],
        server_line: Option<&[u8]>,
        length: Length,
        conn: ConnHeader,
    ) {
        let key = PrefixKey {
            status: res.status,
            reason: res.reason.map(|r| (r.as_ptr() as usize, r.len())),
            server: server_line.map(|l| (l.as_ptr() as usize, l.len())),
            has: res.has & (has::DATE | has::SERVER),
            secs,
        };
        if self.prefix != Some(key) {
            self.render_prefix(key, res, date, server_line);
        }
        if self.length != Some(length) {
            self.block.truncate(self.prefix_len);
            length.encode(&mut self.block);
            self.length = Some(length);
        }
        out.reserve(self.block.len() + res.fields.len() + TAIL_RESERVE);
        out.extend_from_slice(&self.block);
        match conn {
            ConnHeader::None => {}
            ConnHeader::KeepAlive => out.extend_from_slice(b"Connection: keep-alive\r\n"),
            ConnHeader::Close => out.extend_from_slice(b"Connection: close\r\n"),
        }
        if !res.fields.is_empty() {
            out.extend_from_slice(&res.fields);
        }
        out.extend_from_slice(b"\r\n");
    }

    /// Renders the status line, the server's line and the date for `key` (the framing line
    /// after them is rendered again too).
    fn render_prefix(
        &mut self,
        key: PrefixKey,
        res: &HeadToSend,
        date: &[u8; http_date::LEN],
        server_line: Option<&[u8]>,
    ) {
        let b = &mut self.block;
        b.clear();
        match (res.status, res.reason) {
            (200, None) => b.extend_from_slice(b"HTTP/1.1 200 OK\r\n"),
            (code, reason) => {
                // `Response::status` keeps codes within 100..=999: always three digits.
                let digits = [
                    b'0' + (code / 100 % 10) as u8,
                    b'0' + (code / 10 % 10) as u8,
                    b'0' + (code % 10) as u8,
                ];
                b.extend_from_slice(b"HTTP/1.1 ");
                b.extend_from_slice(&digits);
                b.push(b' ');
                b.extend_from_slice(reason.unwrap_or_else(|| status::reason(code)).as_bytes());
                b.extend_from_slice(b"\r\n");
            }
        }
        if let Some(line) = server_line {
            if key.has & has::SERVER == 0 {
                b.extend_from_slice(line);
            }
        }
        if key.has & has::DATE == 0 {
            b.extend_from_slice(b"Date: ");
            b.extend_from_slice(date);
            b.extend_from_slice(b"\r\n");
        }
        self.prefix_len = b.len();
        self.prefix = Some(key);
        self.length = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATE: &[u8; 29] = b"Sun, 06 Nov 1994 08:49:37 GMT";

    /// Encodes with a fresh encoder for the date's second.
    fn encode_head(
        out: &mut Vec<u8>,
        res: &HeadToSend,
        date: &[u8; 29],
        server_line: Option<&[u8]>,
        length: Length,
        conn: ConnHeader,
    ) {
        HeadEncoder::default().encode(out, res, 784111777, date, server_line, length, conn);
    }

    fn head(status: u16, reason: Option<&'static str>, fields: &[u8]) -> HeadToSend {
        HeadToSend {
            status,
            reason,
            fields: fields.to_vec(),
            has: 0,
        }
    }

    #[test]
    fn minihttp_compatible_hello_head() {
        let r = head(200, Some("Ok"), b"");
        let mut out = Vec::new();
        encode_head(
            &mut out,
            &r,
            DATE,
            Some(b"Server: M\r\n"),
            Length::Known(13),
            ConnHeader::None,
        );
        assert_eq!(
            out,
            b"HTTP/1.1 200 Ok\r\nServer: M\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 13\r\n\r\n"
        );
    }

    #[test]
    fn status_framing_and_connection() {
        let r = head(404, None, b"X-A: b\r\n");
        let mut out = Vec::new();
        encode_head(&mut out, &r, DATE, None, Length::Chunked, ConnHeader::Close);
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("HTTP/1.1 404 Not Found\r\nDate: "), "{s}");
        assert!(
            s.contains("Transfer-Encoding: chunked\r\nConnection: close\r\nX-A: b\r\n\r\n"),
            "{s}"
        );
    }

    #[test]
    fn handler_date_and_server_win() {
        let r = HeadToSend {
            has: has::DATE | has::SERVER,
            ..head(200, None, b"Date: x\r\nServer: y\r\n")
        };
        let mut out = Vec::new();
        encode_head(
            &mut out,
            &r,
            DATE,
            Some(b"Server: M\r\n"),
            Length::Bodyless,
            ConnHeader::None,
        );
        let s = String::from_utf8(out).unwrap();
        assert_eq!(s.matches("Date:").count(), 1, "{s}");
        assert_eq!(s.matches("Server:").count(), 1, "{s}");
        assert!(!s.contains("Content-Length"), "{s}");
    }

    #[test]
    fn a_reused_encoder_writes_what_a_fresh_one_writes() {
        let later: &[u8; 29] = b"Sun, 06 Nov 1994 08:49:38 GMT";
        let server: &[u8] = b"Server: M\r\n";
        let cases = [
            (
                head(200, Some("Ok"), b""),
                784111777,
                DATE,
                Some(server),
                Length::Known(13),
            ),
            (
                head(200, Some("Ok"), b""),
                784111777,
                DATE,
                Some(server),
                Length::Known(13),
            ),
            (
                head(200, Some("Ok"), b""),
                784111777,
                DATE,
                Some(server),
                Length::Known(7),
            ),
            (
                head(200, Some("Ok"), b"X: y\r\n"),
                784111778,
                later,
                Some(server),
                Length::Known(7),
            ),
            (
                head(404, None, b""),
                784111778,
                later,
                None,
                Length::Chunked,
            ),
            (
                HeadToSend {
                    has: has::DATE,
                    ..head(200, None, b"Date: x\r\n")
                },
                784111778,
                later,
                None,
                Length::Chunked,
            ),
            (
                head(200, None, b""),
                784111778,
                later,
                None,
                Length::Bodyless,
            ),
        ];
        let mut reused = HeadEncoder::default();
        for (i, (res, secs, date, server, length)) in cases.iter().enumerate() {
            for conn in [ConnHeader::None, ConnHeader::Close] {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                reused.encode(&mut a, res, *secs, date, *server, *length, conn);
                HeadEncoder::default().encode(&mut b, res, *secs, date, *server, *length, conn);
                assert_eq!(a, b, "case {i}");
            }
        }
    }
}
