//! The client role: reading a response head off a connection, exactly to its last byte so the
//! body (or the next response, or a tunnel's first bytes) stays in the reader. The client's
//! requests, its pooled connections and its response readers all read heads through here.

use std::io::{self, BufRead};

use crate::h1::decode::{parse_response, HeadScan, ResponseHead, Violation};
use crate::limits::Limits;

/// Why a response head could not be read; the bytes that did arrive are left in the buffer.
#[derive(Debug)]
pub(crate) enum HeadError {
    /// Reading (or preparing to read) failed.
    Io(io::Error),
    /// The peer closed the connection before the head ended.
    Closed,
    /// The head broke the grammar, the framing rules or a limit.
    Violation(Violation),
}

/// Reads one response head from `reader` into `buf` (cleared first), consuming exactly its
/// bytes, and parses it; `head_request` when the request was HEAD or CONNECT (no body follows).
/// `before_read` runs before every read (to arm its timeouts). On success `buf` holds the head
/// from its status line to its empty line.
pub(crate) fn read_response_head<R: BufRead + ?Sized>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    limits: &Limits,
    head_request: bool,
    mut before_read: impl FnMut(&mut R) -> io::Result<()>,
) -> Result<ResponseHead, HeadError> {
    buf.clear();
    let mut scan = HeadScan::default();
    let bounds = loop {
        before_read(reader).map_err(HeadError::Io)?;
        let available = reader.fill_buf().map_err(HeadError::Io)?;
        if available.is_empty() {
            return Err(HeadError::Closed);
        }
        let old = buf.len();
        let n = available.len();
        buf.extend_from_slice(available);
        match scan.scan(buf, limits) {
            Ok(Some(bounds)) => {
                reader.consume(bounds.end - old);
                buf.truncate(bounds.end);
                break bounds;
            }
            Ok(None) => reader.consume(n),
            Err(f) => return Err(HeadError::Violation(Violation::from_failure(f))),
        }
    };
    let head = parse_response(buf, bounds.start, limits.max_headers, head_request)
        .map_err(HeadError::Violation)?;
    buf.drain(..bounds.start);
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_exactly_one_head_and_leaves_the_rest() {
        let wire = b"\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1";
        let mut reader = io::BufReader::with_capacity(7, &wire[..]);
        let mut buf = Vec::new();
        let head = read_response_head(&mut reader, &mut buf, &Limits::default(), false, |_| Ok(()))
            .unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(buf, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n");
        let mut rest = Vec::new();
        io::Read::read_to_end(&mut reader, &mut rest).unwrap();
        assert_eq!(rest, b"hiHTTP/1.1");
    }

    #[test]
    fn a_close_inside_the_head_keeps_what_arrived() {
        let mut reader = &b"HTTP/1.1 200"[..];
        let mut buf = Vec::new();
        let e = read_response_head(&mut reader, &mut buf, &Limits::default(), false, |_| Ok(()));
        assert!(matches!(e, Err(HeadError::Closed)));
        assert_eq!(buf, b"HTTP/1.1 200");
    }
}
