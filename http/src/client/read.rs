//! [`read_response`]: the client's response decoder over any `BufRead`, for connections the
//! client does not manage (raw probes, pipelined tests, tools that wrote the request
//! themselves). Same head grammar and RFC 9112 §6.3 framing as [`Client`](super::Client).

use std::io::{self, BufRead, Read};

use moria_streams::chunked::TrailerField;

use super::error::Violation;
use super::response::Headers;
use crate::h1::{read_response_head, BodyDecoder, BodyFault, BodyFraming, HeadError};
use crate::limits::Limits;
use crate::method::Version;

/// One response read by [`read_response`], its body complete in memory.
#[derive(Debug, Clone)]
pub struct RawResponse {
    /// The head exactly as received, status line to the empty line.
    pub head: Vec<u8>,
    /// The version of the status line.
    pub version: Version,
    /// The status code.
    pub status: u16,
    /// The reason phrase (lossy UTF-8).
    pub reason: String,
    /// The header fields in order.
    pub headers: Headers,
    /// The body, de-chunked (never decompressed).
    pub body: Vec<u8>,
    /// The trailer fields of a chunked body.
    pub trailers: Vec<TrailerField>,
    /// Whether the connection may carry another request after this response.
    pub keep_alive: bool,
}

impl RawResponse {
    /// The body as UTF-8 (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Reads one response from `reader`: the head, then the body as framed (length, chunked,
/// until close; none for 1xx/204/304 or when `head_request`, the answer to HEAD), at most
/// `max_body` bytes of it. Interim 1xx responses are returned like final ones. Reads nothing
/// past the response, so the next one stays in `reader` (wrap a plain `Read` in a `BufReader`
/// kept for the connection's life, or of capacity 1 to leave the stream itself exactly at the
/// end of the response). A framing violation is `InvalidData`; an end of stream before the
/// response ends is `UnexpectedEof`.
pub fn read_response<R: BufRead + ?Sized>(
    reader: &mut R,
    head_request: bool,
    max_body: u64,
) -> io::Result<RawResponse> {
    let limits = Limits::default();
    let mut buf = Vec::new();
    let head = read_response_head(reader, &mut buf, &limits, head_request, |_| Ok(())).map_err(
        |e| match e {
            HeadError::Io(e) => e,
            HeadError::Closed => eof(Violation::TruncatedHead),
            HeadError::Violation(v) => invalid(v),
        },
    )?;
    if let BodyFraming::Length(n) = head.framing {
        if n > max_body {
            return Err(too_large(max_body));
        }
    }
    let mut body = Vec::new();
    let mut decoder = BodyDecoder::new(&mut *reader, head.framing);
    read_capped(&mut decoder, &mut body, max_body).map_err(|e| match BodyFault::of(&e) {
        BodyFault::Truncated => eof(Violation::TruncatedBody),
        BodyFault::BadChunk(why) => invalid(Violation::BadChunk(why)),
        BodyFault::Transport => e,
    })?;
    let trailers = decoder.trailers().to_vec();
    Ok(RawResponse {
        head: buf,
        version: head.version,
        status: head.status,
        reason: head.reason,
        headers: Headers::new(head.fields),
        body,
        trailers,
        keep_alive: head.keep_alive,
    })
}

/// Reads `from` to its end into `body`, failing past `max` bytes.
fn read_capped(from: &mut (impl Read + ?Sized), body: &mut Vec<u8>, max: u64) -> io::Result<()> {
    let read = from.take(max.saturating_add(1)).read_to_end(body)?;
    if read as u64 > max {
        return Err(too_large(max));
    }
    Ok(())
}

fn invalid(v: Violation) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, v.to_string())
}

fn eof(v: Violation) -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, v.to_string())
}

fn too_large(max: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("response body larger than {max} bytes"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelined_responses_are_read_one_at_a_time() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi\
HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n\
HTTP/1.0 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\n\r\nrest";
        let mut r = &wire[..];
        let a = read_response(&mut r, false, 100).unwrap();
        assert_eq!(
            (a.status, &a.body[..], a.keep_alive),
            (200, &b"hi"[..], true)
        );
        assert_eq!(a.headers.get("content-length"), Some("2"));
        let b = read_response(&mut r, false, 100).unwrap();
        assert_eq!((&b.body[..], b.trailers.len()), (&b"abc"[..], 1));
        let c = read_response(&mut r, false, 100).unwrap();
        assert_eq!(
            (c.status, c.version, c.keep_alive),
            (204, Version::Http10, false)
        );
        assert_eq!(c.head, b"HTTP/1.0 204 No Content\r\n\r\n");
        let d = read_response(&mut r, false, 100).unwrap();
        assert_eq!((d.text(), d.keep_alive), ("rest".to_owned(), false));
    }

    #[test]
    fn violations_and_truncations_are_errors() {
        let kind = |wire: &[u8], max| {
            read_response(&mut &wire[..], false, max)
                .unwrap_err()
                .kind()
        };
        use io::ErrorKind::{InvalidData, UnexpectedEof};
        assert_eq!(
            kind(
                b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                9
            ),
            InvalidData
        );
        assert_eq!(
            kind(
                b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
                9
            ),
            InvalidData
        );
        assert_eq!(
            kind(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                9
            ),
            InvalidData
        );
        assert_eq!(
            kind(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", 9),
            UnexpectedEof
        );
        assert_eq!(kind(b"HTTP/1.1 200 OK\r\nContent-Len", 9), UnexpectedEof);
        assert_eq!(
            kind(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde", 4),
            InvalidData
        );
        assert_eq!(kind(b"HTTP/1.1 200 OK\r\n\r\nabcde", 4), InvalidData);
    }
}
