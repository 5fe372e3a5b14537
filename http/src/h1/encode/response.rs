//! Response head encoding into the connection's write buffer: the server role's head, from a
//! [`HeadToSend`] whose field lines were validated as they were set (with
//! `moria_streams::http_grammar::{is_token, is_field_value}`).

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

/// Room reserved up front for the status line and the server's own header lines.
const HEAD_RESERVE: usize = 160;

/// Appends the status line and header section of `res` to `out`. The date is an array, not a
/// slice: its length known here, its copy is two stores, not a `memcpy` call.
pub(crate) fn encode_head(
    out: &mut Vec<u8>,
    res: &HeadToSend,
    date: &[u8; http_date::LEN],
    server_line: Option<&[u8]>,
    length: Length,
    conn: ConnHeader,
) {
    out.reserve(HEAD_RESERVE + res.fields.len());
    match (res.status, res.reason) {
        (200, None) => out.extend_from_slice(b"HTTP/1.1 200 OK\r\n"),
        (code, reason) => {
            // `Response::status` keeps codes within 100..=999: always three digits.
            let digits = [
                b'0' + (code / 100 % 10) as u8,
                b'0' + (code / 10 % 10) as u8,
                b'0' + (code % 10) as u8,
            ];
            out.extend_from_slice(b"HTTP/1.1 ");
            out.extend_from_slice(&digits);
            out.push(b' ');
            out.extend_from_slice(reason.unwrap_or_else(|| status::reason(code)).as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
    if let Some(line) = server_line {
        if res.has & has::SERVER == 0 {
            out.extend_from_slice(line);
        }
    }
    if res.has & has::DATE == 0 {
        out.extend_from_slice(b"Date: ");
        out.extend_from_slice(date);
        out.extend_from_slice(b"\r\n");
    }
    length.encode(out);
    match conn {
        ConnHeader::None => {}
        ConnHeader::KeepAlive => out.extend_from_slice(b"Connection: keep-alive\r\n"),
        ConnHeader::Close => out.extend_from_slice(b"Connection: close\r\n"),
    }
    out.extend_from_slice(&res.fields);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATE: &[u8; 29] = b"Sun, 06 Nov 1994 08:49:37 GMT";

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
}
