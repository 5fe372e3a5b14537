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

/// What the rendered head lines depend on, as words compared all at once: the status and the
/// `has` flags that drop our own `Date` or `Server` line, the reason's and the server line's
/// addresses and lengths (`&'static` bytes, named by where they are; 0 for none), the second
/// the date says, and the framing (a tag and the length). All zeros (status 0) never matches.
type HeadKey = [u64; 8];

/// What the rest of the block depends on besides the field lines' bytes: the `Connection`
/// line, the kept static body's address and length (0 for none), and the field lines' length.
/// All ones never matches.
type TailKey = [u64; 4];

/// Whether two keys differ, without a branch per word.
#[inline(always)]
fn differ<const N: usize>(a: &[u64; N], b: &[u64; N]) -> bool {
    a.iter().zip(b).fold(0, |acc, (x, y)| acc | (x ^ y)) != 0
}

/// The address and length of `bytes`, or zeros.
#[inline(always)]
fn named(bytes: Option<&[u8]>) -> [u64; 2] {
    bytes.map_or([0, 0], |b| [b.as_ptr() as u64, b.len() as u64])
}

/// Static bodies up to this size are kept in the block after the head they were sent with;
/// a larger one is appended by the caller.
pub(crate) const KEPT_BODY_MAX: usize = 1024;

/// A response head rendered once and copied whole for every response that shares it: the
/// status line, `Server`, `Date` (rendered again when the second changes), the framing line,
/// then the `Connection` line, the field lines, the empty line and a small static body. The
/// lines up to the framing are rendered again only when their key changes, the rest when its
/// key or the field lines' bytes do; so a pipelined batch of like answers costs one copy per
/// answer, head and body together, and anything else is rendered again: never wrong, only
/// slower.
#[derive(Debug)]
pub(crate) struct HeadEncoder {
    /// What the head lines in `block` were rendered for.
    head: HeadKey,
    /// What the rest of `block` was rendered for.
    tail: TailKey,
    /// The whole rendered head, then the kept body.
    block: Vec<u8>,
    /// Where the head lines end in `block` (the `Connection` line, if any, starts there).
    head_len: usize,
    /// Where the field lines start in `block`.
    fields_at: usize,
}

impl Default for HeadEncoder {
    fn default() -> Self {
        HeadEncoder {
            head: [0; 8],
            tail: [u64::MAX; 4],
            block: Vec::new(),
            head_len: 0,
            fields_at: 0,
        }
    }
}

impl HeadEncoder {
    /// Appends the status line and header section of `res` to `out`; `date` is the IMF-fixdate
    /// of `secs`. `body`, a static body to send right after the head, is appended with it
    /// when it is at most [`KEPT_BODY_MAX`] bytes; returns whether it was.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn encode(
        &mut self,
        out: &mut Vec<u8>,
        res: &HeadToSend,
        secs: u64,
        date: &[u8; http_date::LEN],
        server_line: Option<&[u8]>,
        length: Length,
        conn: ConnHeader,
        body: Option<&'static [u8]>,
    ) -> bool {
        let body = body.filter(|b| b.len() <= KEPT_BODY_MAX);
        let [reason, reason_len] = named(res.reason.map(str::as_bytes));
        let [server, server_len] = named(server_line);
        let (tag, n) = match length {
            Length::Bodyless => (0, 0),
            Length::Known(n) => (1, n),
            Length::Chunked => (2, 0),
            Length::Close => (3, 0),
        };
        let status = u64::from(res.status) | u64::from(res.has & (has::DATE | has::SERVER)) << 16;
        let head = [status, reason, reason_len, server, server_len, secs, tag, n];
        let [body_at, body_len] = named(body);
        let tail = [conn as u64, body_at, body_len, res.fields.len() as u64];
        if differ(&head, &self.head) {
            self.render_head(head, res, date, server_line, length);
        }
        if differ(&tail, &self.tail) || !self.same_fields(&res.fields) {
            self.render_tail(tail, conn, &res.fields, body);
        }
        out.extend_from_slice(&self.block);
        body.is_some()
    }

    /// Whether the field lines in `block` are `fields` (whose length the tail key matched).
    #[inline(always)]
    fn same_fields(&self, fields: &[u8]) -> bool {
        fields.is_empty()
            || self
                .block
                .get(self.fields_at..self.fields_at + fields.len())
                == Some(fields)
    }

    /// Renders the status line, the server's line, the date and the framing line for `key`
    /// (the rest of the block is rendered again after them).
    #[cold]
    fn render_head(
        &mut self,
        key: HeadKey,
        res: &HeadToSend,
        date: &[u8; http_date::LEN],
        server_line: Option<&[u8]>,
        length: Length,
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
            if res.has & has::SERVER == 0 {
                b.extend_from_slice(line);
            }
        }
        if res.has & has::DATE == 0 {
            b.extend_from_slice(b"Date: ");
            b.extend_from_slice(date);
            b.extend_from_slice(b"\r\n");
        }
        length.encode(b);
        self.head_len = b.len();
        self.head = key;
        self.tail = [u64::MAX; 4];
    }

    /// Renders the `Connection` line, the field lines, the empty line and the kept body after
    /// the head lines, for `key`.
    #[inline(never)]
    fn render_tail(
        &mut self,
        key: TailKey,
        conn: ConnHeader,
        fields: &[u8],
        body: Option<&'static [u8]>,
    ) {
        let b = &mut self.block;
        b.truncate(self.head_len);
        match conn {
            ConnHeader::None => {}
            ConnHeader::KeepAlive => b.extend_from_slice(b"Connection: keep-alive\r\n"),
            ConnHeader::Close => b.extend_from_slice(b"Connection: close\r\n"),
        }
        self.fields_at = b.len();
        b.extend_from_slice(fields);
        b.extend_from_slice(b"\r\n");
        b.extend_from_slice(body.unwrap_or_default());
        self.tail = key;
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
        HeadEncoder::default().encode(out, res, 784111777, date, server_line, length, conn, None);
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
                head(200, Some("Ok"), b"X: z\r\n"),
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
        static LARGE: [u8; KEPT_BODY_MAX + 1] = [b'x'; KEPT_BODY_MAX + 1];
        let bodies: [Option<&'static [u8]>; 5] = [
            None,
            Some(b"Hello"),
            Some(b"Hello"),
            Some(b"World"),
            Some(&LARGE),
        ];
        let mut reused = HeadEncoder::default();
        for (i, (res, secs, date, server, length)) in cases.iter().enumerate() {
            for conn in [ConnHeader::None, ConnHeader::Close] {
                for body in bodies {
                    // What a fresh encoder writes for the head alone, then the body.
                    let mut want = Vec::new();
                    let fresh = HeadEncoder::default()
                        .encode(&mut want, res, *secs, date, *server, *length, conn, None);
                    assert!(!fresh, "no body, none written");
                    want.extend_from_slice(body.unwrap_or_default());
                    let mut got = Vec::new();
                    let kept =
                        reused.encode(&mut got, res, *secs, date, *server, *length, conn, body);
                    let small = body.is_some_and(|b| b.len() <= KEPT_BODY_MAX);
                    assert_eq!(kept, small, "case {i}, {conn:?}");
                    if !kept {
                        got.extend_from_slice(body.unwrap_or_default());
                    }
                    assert_eq!(got, want, "case {i}, {conn:?}");
                }
            }
        }
    }
}
