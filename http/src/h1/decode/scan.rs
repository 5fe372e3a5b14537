//! Finds where a request head ends in a growing buffer, in linear time over slow deliveries,
//! and enforces the request-line and head-size limits before the head is complete.

use memchr::memchr;

use super::failure::Failure;
use crate::limits::{Limits, MAX_LEADING_EMPTY_LINES};

/// Where the scan of a partly received head stands; reset for each request.
#[derive(Debug, Default, Clone)]
pub(crate) struct HeadScan {
    /// Bytes before this index hold no head terminator.
    pos: usize,
    /// The request line's LF, once seen.
    line_end: Option<usize>,
}

/// Outcome of a scan: the head is `buf[..end]` with its request line starting at `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeadBounds {
    /// First byte of the request line (after tolerated empty lines).
    pub start: usize,
    /// One past the empty line that ends the head.
    pub end: usize,
}

impl HeadScan {
    /// Forgets the previous request.
    pub(crate) fn reset(&mut self) {
        self.pos = 0;
        self.line_end = None;
    }

    /// Whether no scan has looked at this head yet. A scan of a non-empty buffer that does not
    /// start with an empty line always leaves it false (it notes a line end or a position).
    pub(crate) fn is_fresh(&self) -> bool {
        self.pos == 0 && self.line_end.is_none()
    }

    /// Looks for a complete head at the start of `buf`: `Ok(Some)` when complete, `Ok(None)`
    /// when more bytes are needed, `Err` when a limit is already broken.
    pub(crate) fn scan(
        &mut self,
        buf: &[u8],
        limits: &Limits,
    ) -> Result<Option<HeadBounds>, Failure> {
        let start = match leading_empty_lines(buf)? {
            Some(s) => s,
            None => return Ok(None),
        };
        let mut p = self.pos.max(start);
        while let Some(i) = memchr(b'\n', &buf[p..]) {
            let nl = p + i;
            if self.line_end.is_none() {
                self.line_end = Some(nl);
                if line_len(buf, start, nl) > limits.max_request_line {
                    return Err(Failure::RequestLineTooLong);
                }
            }
            // RFC 9112 §2.2: the head ends with an empty line (CRLF, or a bare LF we tolerate).
            match buf.get(nl + 1) {
                None => {
                    self.pos = nl;
                    return self.incomplete(buf, start, limits);
                }
                Some(b'\n') => return self.complete(start, nl + 2, limits),
                Some(b'\r') => match buf.get(nl + 2) {
                    None => {
                        self.pos = nl;
                        return self.incomplete(buf, start, limits);
                    }
                    Some(b'\n') => return self.complete(start, nl + 3, limits),
                    Some(_) => p = nl + 1,
                },
                Some(_) => p = nl + 1,
            }
        }
        self.pos = buf.len();
        self.incomplete(buf, start, limits)
    }

    fn complete(
        &self,
        start: usize,
        end: usize,
        limits: &Limits,
    ) -> Result<Option<HeadBounds>, Failure> {
        if end > limits.max_head {
            return Err(Failure::HeadTooLarge);
        }
        Ok(Some(HeadBounds { start, end }))
    }

    fn incomplete(
        &self,
        buf: &[u8],
        start: usize,
        limits: &Limits,
    ) -> Result<Option<HeadBounds>, Failure> {
        if self.line_end.is_none() && buf.len() - start > limits.max_request_line + 1 {
            return Err(Failure::RequestLineTooLong);
        }
        if buf.len() >= limits.max_head {
            return Err(Failure::HeadTooLarge);
        }
        Ok(None)
    }
}

/// Length of the line `buf[start..nl]` without its CR.
fn line_len(buf: &[u8], start: usize, nl: usize) -> usize {
    if nl > start && buf[nl - 1] == b'\r' {
        nl - 1 - start
    } else {
        nl - start
    }
}

/// Skips the empty lines RFC 9112 §2.2 tolerates before a request line; `None` when the buffer
/// ends inside one.
fn leading_empty_lines(buf: &[u8]) -> Result<Option<usize>, Failure> {
    let mut i = 0;
    let mut lines = 0;
    loop {
        match buf.get(i) {
            None => return Ok(None),
            Some(b'\n') => i += 1,
            Some(b'\r') => match buf.get(i + 1) {
                None => return Ok(None),
                Some(b'\n') => i += 2,
                Some(_) => return Err(Failure::BareCr),
            },
            Some(_) => return Ok(Some(i)),
        }
        lines += 1;
        if lines > MAX_LEADING_EMPTY_LINES {
            return Err(Failure::TooManyEmptyLines);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(buf: &[u8]) -> Result<Option<HeadBounds>, Failure> {
        HeadScan::default().scan(buf, &Limits::default())
    }

    #[test]
    fn finds_crlf_terminator() {
        let b = b"GET / HTTP/1.1\r\nHost: a\r\n\r\nrest";
        assert_eq!(
            scan_all(b),
            Ok(Some(HeadBounds {
                start: 0,
                end: b.len() - 4
            }))
        );
    }

    #[test]
    fn finds_bare_lf_terminator() {
        let b = b"GET / HTTP/1.1\nHost: a\n\n";
        assert_eq!(
            scan_all(b),
            Ok(Some(HeadBounds {
                start: 0,
                end: b.len()
            }))
        );
    }

    #[test]
    fn skips_leading_empty_lines() {
        let b = b"\r\n\r\nGET / HTTP/1.1\r\n\r\n";
        assert_eq!(
            scan_all(b),
            Ok(Some(HeadBounds {
                start: 4,
                end: b.len()
            }))
        );
    }

    #[test]
    fn too_many_leading_empty_lines() {
        assert_eq!(
            scan_all(&b"\r\n".repeat(10)),
            Err(Failure::TooManyEmptyLines)
        );
    }

    #[test]
    fn incomplete_until_the_last_byte() {
        let b = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
        let mut s = HeadScan::default();
        let l = Limits::default();
        for n in 0..b.len() {
            assert_eq!(s.scan(&b[..n], &l), Ok(None), "prefix {n}");
        }
        assert_eq!(
            s.scan(b, &l),
            Ok(Some(HeadBounds {
                start: 0,
                end: b.len()
            }))
        );
    }

    #[test]
    fn long_request_line_is_414_before_its_end() {
        let l = Limits {
            max_request_line: 16,
            ..Limits::default()
        };
        let mut s = HeadScan::default();
        assert_eq!(
            s.scan(b"GET /aaaaaaaaaaaaaaaaaaaaaa", &l),
            Err(Failure::RequestLineTooLong)
        );
        let mut s = HeadScan::default();
        assert_eq!(
            s.scan(b"GET /aaaaaaaaaaaaaa\r\n", &l),
            Err(Failure::RequestLineTooLong)
        );
        let mut s = HeadScan::default();
        assert!(s.scan(b"GET /a HTTP/1.1\r\n", &l).is_ok());
    }

    #[test]
    fn large_head_is_431() {
        let l = Limits {
            max_head: 64,
            ..Limits::default()
        };
        let mut b = b"GET / HTTP/1.1\r\n".to_vec();
        b.extend_from_slice(&b"X: yyyyyyyyyyyy\r\n".repeat(4));
        assert_eq!(HeadScan::default().scan(&b, &l), Err(Failure::HeadTooLarge));
        b.extend_from_slice(b"\r\n");
        assert_eq!(HeadScan::default().scan(&b, &l), Err(Failure::HeadTooLarge));
    }

    #[test]
    fn scan_position_only_moves_forward() {
        // Feeding a head byte by byte must not rescan from the start: the position where the
        // next scan begins trails the end of the buffer by at most two bytes.
        let mut b = b"GET / HTTP/1.1\r\n".to_vec();
        while b.len() < 4_000 {
            b.extend_from_slice(b"X-Pad: 0123456789\r\n");
        }
        b.extend_from_slice(b"\r\n");
        let mut s = HeadScan::default();
        let l = Limits::default();
        for n in 1..b.len() {
            assert_eq!(s.scan(&b[..n], &l), Ok(None));
            assert!(s.pos + 2 >= n, "rescanned from {} at {n}", s.pos);
        }
        assert_eq!(s.scan(&b, &l).map(|o| o.map(|h| h.end)), Ok(Some(b.len())));
    }
}
