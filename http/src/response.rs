//! The response a handler fills in: status, owned headers (encoded once into a reusable buffer)
//! and a [`Body`] — bytes, a reader, a file (zero-copy path), or a streamed writer.

use std::fmt;
use std::io::{self, Read, Write};

use bytes::Bytes;
use moria_streams::http_grammar::{is_field_value, is_token};
use moria_streams::File;

pub(crate) use crate::h1::has;
use crate::h1::{is_framing_field, HeadToSend};
use crate::source::Ranges;
use crate::upgrade::OnUpgrade;

/// A streamed body: called with the connection's writer after the head is sent.
pub type StreamFn = Box<dyn FnOnce(&mut dyn Write) -> io::Result<()> + Send>;

/// What a response carries after its head.
pub(crate) enum BodyKind {
    Empty,
    Static(&'static [u8]),
    /// Owned or shared bytes: a `Vec` moves in without a copy, a [`Bytes`] shared between
    /// connections is sent from where it is.
    Bytes(Bytes),
    /// The response's own reusable buffer ([`Response::body_mut`]).
    Buffer,
    Reader(Box<dyn Read + Send>, Option<u64>),
    File(File, u64, u64),
    Stream(StreamFn),
    Ranges(Ranges),
}

impl BodyKind {
    /// Whether dropping this body frees or closes something (the enum's drop glue is a call
    /// per response; the bodies of most responses own nothing).
    fn owns(&self) -> bool {
        !matches!(
            self,
            BodyKind::Empty | BodyKind::Static(_) | BodyKind::Buffer
        )
    }
}

/// A response body.
pub struct Body(pub(crate) BodyKind);

impl Body {
    /// No body (`Content-Length: 0`).
    pub fn empty() -> Body {
        Body(BodyKind::Empty)
    }

    /// A reader; with `len` it is sent with that Content-Length (and must yield exactly that
    /// many bytes), without it chunked (HTTP/1.1) or until close (HTTP/1.0).
    pub fn reader(reader: impl Read + Send + 'static, len: Option<u64>) -> Body {
        Body(BodyKind::Reader(Box::new(reader), len))
    }

    /// `len` bytes of `file` from `offset`, sent with `sendfile` on plain TCP (reads on the
    /// offload pool otherwise).
    pub fn file(file: File, offset: u64, len: u64) -> Body {
        Body(BodyKind::File(file, offset, len))
    }

    /// A body written by `f` after the head is sent, chunked (or until close on HTTP/1.0).
    pub fn stream(f: impl FnOnce(&mut dyn Write) -> io::Result<()> + Send + 'static) -> Body {
        Body(BodyKind::Stream(Box::new(f)))
    }
}

impl From<&'static str> for Body {
    fn from(s: &'static str) -> Body {
        Body(BodyKind::Static(s.as_bytes()))
    }
}

impl From<&'static [u8]> for Body {
    fn from(s: &'static [u8]) -> Body {
        Body(BodyKind::Static(s))
    }
}

impl From<Vec<u8>> for Body {
    fn from(v: Vec<u8>) -> Body {
        Body(BodyKind::Bytes(Bytes::from(v)))
    }
}

impl From<String> for Body {
    fn from(s: String) -> Body {
        Body(BodyKind::Bytes(Bytes::from(s)))
    }
}

/// Bytes shared between responses (a cached page, say): each response holds a reference, not
/// a copy.
impl From<Bytes> for Body {
    fn from(b: Bytes) -> Body {
        Body(BodyKind::Bytes(b))
    }
}

/// An HTTP response under construction; the connection reuses one per connection.
pub struct Response {
    /// Status, reason and field lines, in the codec's own type.
    pub(crate) head: HeadToSend,
    pub(crate) close: bool,
    pub(crate) invalid: Option<&'static str>,
    pub(crate) body: BodyKind,
    pub(crate) buf: Vec<u8>,
    /// What takes the connection after a 101 (a WebSocket), set by `ws::Acceptor`.
    pub(crate) upgrade: Option<OnUpgrade>,
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.head.status)
            .field("headers", &String::from_utf8_lossy(&self.head.fields))
            .finish()
    }
}

impl Default for Response {
    fn default() -> Self {
        Response::new()
    }
}

impl Response {
    /// An empty `200 OK`.
    pub fn new() -> Response {
        Response {
            head: HeadToSend::with_capacity(256),
            close: false,
            invalid: None,
            body: BodyKind::Empty,
            buf: Vec::new(),
            upgrade: None,
        }
    }

    /// Back to an empty `200 OK`, keeping the buffers' capacity.
    #[inline]
    pub(crate) fn reset(&mut self) {
        self.head.clear();
        self.close = false;
        self.invalid = None;
        self.replace_body(BodyKind::Empty);
        self.buf.clear();
        self.upgrade = None;
    }

    /// Puts `kind` in place of the body, calling the old one's drop only when it owns something.
    fn replace_body(&mut self, kind: BodyKind) {
        let old = std::mem::replace(&mut self.body, kind);
        if old.owns() {
            drop(old);
        } else {
            // Nothing to free: skip the drop glue's call.
            std::mem::forget(old);
        }
    }

    /// Frees the body buffer if it grew past `max` bytes (a pooled response keeps the usual
    /// size only).
    pub(crate) fn trim(&mut self, max: usize) {
        if self.buf.capacity() > max {
            self.buf = Vec::new();
        }
    }

    /// Sets the status code (default 200); a code outside 100–999 becomes a 500.
    pub fn status(&mut self, code: u16) -> &mut Self {
        if (100..1000).contains(&code) {
            self.head.status = code;
        } else {
            self.invalid = Some("status code outside 100-999");
        }
        self
    }

    /// The status code set so far.
    pub fn status_code(&self) -> u16 {
        self.head.status
    }

    /// Overrides the reason phrase (default: the standard one for the status).
    pub fn reason(&mut self, reason: &'static str) -> &mut Self {
        if reason
            .bytes()
            .all(|c| c == b'\t' || (0x20..0x7f).contains(&c))
        {
            self.head.reason = Some(reason);
        } else {
            self.invalid = Some("reason phrase with a control character");
        }
        self
    }

    /// Adds a header field. A name that is not a token, a value with CR, LF or another control
    /// character, or a framing header (Content-Length, Transfer-Encoding) turns the response
    /// into a 500 (no response splitting, no conflicting framing). `Connection: close` asks the
    /// server to close after this response.
    pub fn header(&mut self, name: &str, value: impl AsRef<[u8]>) -> &mut Self {
        let value = value.as_ref();
        if !is_token(name.as_bytes()) {
            self.invalid = Some("header name is not a token");
            return self;
        }
        if !is_field_value(value) {
            self.invalid = Some("header value with a control character");
            return self;
        }
        // The server writes framing from the body and connection state (and never upgrades):
        // a handler setting one of these is a bug reported as a 500.
        if is_framing_field(name) || name.eq_ignore_ascii_case("upgrade") {
            self.invalid = Some("framing header set by a handler");
            return self;
        }
        if name.eq_ignore_ascii_case("connection") {
            if value
                .split(|&c| c == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"close"))
            {
                self.close = true;
            }
            return self;
        }
        self.push_header(name, value)
    }

    /// [`header`](Self::header) for the server's own headers (the static file answers): a
    /// fixed name that is neither a framing field nor `Connection`/`Upgrade`, and a value the
    /// server formatted itself. The checks run in debug builds only: on the file path they
    /// were about 120 instructions a header
    /// (bench/results/2026-12-01-eight-workers-per-worker-pools.md).
    pub(crate) fn own_header(&mut self, name: &'static str, value: &[u8]) -> &mut Self {
        debug_assert!(is_token(name.as_bytes()) && is_field_value(value), "{name}");
        debug_assert!(
            !is_framing_field(name)
                && !name.eq_ignore_ascii_case("upgrade")
                && !name.eq_ignore_ascii_case("connection"),
            "{name}"
        );
        self.push_header(name, value)
    }

    /// Makes this a `101 Switching Protocols` to a WebSocket: `Upgrade` and `Connection`
    /// (which handlers may not set) and what takes the connection once the 101 is out.
    pub(crate) fn upgrade(&mut self, on_upgrade: OnUpgrade) -> &mut Self {
        self.head.status = 101;
        self.push_header("Upgrade", b"websocket");
        self.push_header("Connection", b"Upgrade");
        self.upgrade = Some(on_upgrade);
        self
    }

    fn push_header(&mut self, name: &str, value: &[u8]) -> &mut Self {
        self.head.has |= flag_for(name);
        self.head.fields.extend_from_slice(name.as_bytes());
        self.head.fields.extend_from_slice(b": ");
        self.head.fields.extend_from_slice(value);
        self.head.fields.extend_from_slice(b"\r\n");
        self
    }

    /// Sets `Content-Type`.
    pub fn content_type(&mut self, value: &str) -> &mut Self {
        self.header("Content-Type", value)
    }

    /// The first value set for header `name` (case-insensitive).
    pub fn get_header(&self, name: &str) -> Option<&[u8]> {
        self.head.fields.split(|&c| c == b'\n').find_map(|line| {
            let line = line.strip_suffix(b"\r")?;
            let colon = line.iter().position(|&c| c == b':')?;
            line[..colon]
                .eq_ignore_ascii_case(name.as_bytes())
                .then(|| line[colon + 1..].trim_ascii())
        })
    }

    /// Sets the body.
    pub fn body(&mut self, body: impl Into<Body>) -> &mut Self {
        self.replace_body(body.into().0);
        self
    }

    /// The response's reusable in-memory body buffer (the body becomes its content).
    pub fn body_mut(&mut self) -> &mut Vec<u8> {
        if !matches!(self.body, BodyKind::Buffer) {
            self.buf.clear();
            self.body = BodyKind::Buffer;
        }
        &mut self.buf
    }

    /// Asks the server to close the connection after this response.
    pub fn close(&mut self) -> &mut Self {
        self.close = true;
        self
    }

    /// Whether a header with one of the `has` flags was set.
    pub(crate) fn has(&self, flag: u8) -> bool {
        self.head.has & flag != 0
    }

    /// The in-memory body, if the body is held in memory.
    pub(crate) fn memory_body(&self) -> Option<&[u8]> {
        match &self.body {
            BodyKind::Empty => Some(&[]),
            BodyKind::Static(s) => Some(s),
            BodyKind::Bytes(v) => Some(v.as_ref()),
            BodyKind::Buffer => Some(&self.buf),
            _ => None,
        }
    }
}

fn flag_for(name: &str) -> u8 {
    match name.len() {
        4 if name.eq_ignore_ascii_case("date") => has::DATE,
        4 if name.eq_ignore_ascii_case("vary") => has::VARY,
        6 if name.eq_ignore_ascii_case("server") => has::SERVER,
        12 if name.eq_ignore_ascii_case("content-type") => has::CONTENT_TYPE,
        16 if name.eq_ignore_ascii_case("content-encoding") => has::CONTENT_ENCODING,
        _ => 0,
    }
}

/// Fills `res` with a short plain-text error page for `status` (the reason phrase only: no
/// internal error text ever reaches the client).
pub fn respond_error(res: &mut Response, status: u16) {
    res.reset();
    res.status(status);
    res.content_type("text/plain; charset=utf-8");
    let body = res.body_mut();
    let mut code = itoa::Buffer::new();
    body.extend_from_slice(code.format(status).as_bytes());
    body.push(b' ');
    body.extend_from_slice(crate::status::reason(status).as_bytes());
    body.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_bytes_are_sent_as_they_are() {
        let page = Bytes::from_static(b"cached page");
        let mut a = Response::new();
        let mut b = Response::new();
        a.body(page.clone());
        b.body(page.clone());
        assert_eq!(a.memory_body(), Some(&b"cached page"[..]));
        assert_eq!(b.memory_body(), Some(&b"cached page"[..]));
        let mut v = Response::new();
        v.body(String::from("owned"));
        assert_eq!(v.memory_body(), Some(&b"owned"[..]));
    }

    #[test]
    fn headers_are_encoded_and_found() {
        let mut r = Response::new();
        r.header("X-A", "1").content_type("text/plain");
        assert_eq!(r.get_header("x-a"), Some(&b"1"[..]));
        assert_eq!(r.get_header("content-type"), Some(&b"text/plain"[..]));
        assert!(r.has(has::CONTENT_TYPE));
        assert!(r.invalid.is_none());
    }

    #[test]
    fn response_splitting_is_refused() {
        let mut r = Response::new();
        r.header("X", "a\r\nSet-Cookie: evil=1");
        assert!(r.invalid.is_some());
        assert!(r.get_header("set-cookie").is_none());
        let mut r = Response::new();
        r.header("X Y", "1");
        assert!(r.invalid.is_some());
        let mut r = Response::new();
        r.header("Content-Length", "5");
        assert!(r.invalid.is_some());
    }

    #[test]
    fn connection_close_sets_the_flag() {
        let mut r = Response::new();
        r.header("Connection", "close");
        assert!(r.close);
        assert!(r.head.fields.is_empty());
    }

    #[test]
    fn error_page_is_the_reason_only() {
        let mut r = Response::new();
        r.header("X", "1").body("secret");
        respond_error(&mut r, 404);
        assert_eq!(r.head.status, 404);
        assert_eq!(r.memory_body(), Some(&b"404 Not Found\n"[..]));
        assert!(r.get_header("x").is_none());
    }
}
