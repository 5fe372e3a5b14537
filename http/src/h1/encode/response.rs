//! Response head encoding into the connection's write buffer: the server role's head, whose
//! fields a [`Response`] validated as they were set (with [`valid_name`](super::valid_name) and
//! [`valid_value`](super::valid_value)).

use super::Length;
use crate::response::{has, Response};
use crate::status;

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

/// Appends the status line and header section of `res` to `out`.
pub(crate) fn encode_head(
    out: &mut Vec<u8>,
    res: &Response,
    date: &[u8],
    server_line: Option<&[u8]>,
    length: Length,
    conn: ConnHeader,
) {
    out.reserve(HEAD_RESERVE + res.headers.len());
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
        if !res.has(has::SERVER) {
            out.extend_from_slice(line);
        }
    }
    if !res.has(has::DATE) {
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
    out.extend_from_slice(&res.headers);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATE: &[u8] = b"Sun, 06 Nov 1994 08:49:37 GMT";

    #[test]
    fn minihttp_compatible_hello_head() {
        let mut r = Response::new();
        r.reason("Ok");
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
        let mut r = Response::new();
        r.status(404).header("X-A", "b");
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
        let mut r = Response::new();
        r.header("Date", "x").header("Server", "y");
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
