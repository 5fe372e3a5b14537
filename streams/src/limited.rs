//! Length limits: [`Limited`] reads at most (or exactly) N bytes, [`LimitedWriter`] refuses to
//! write past N.

use std::io::{self, BufRead, Read, Write};

use crate::Error;

/// A reader that yields at most `limit` bytes of its inner reader, or exactly that many.
///
/// Unlike `std::io::Take`, the exact mode ([`Limited::exact`]) turns an end of input before the
/// limit into `UnexpectedEof` ([`Error::ShortRead`]), which is what a `Content-Length` body needs.
/// Never reads past the limit, so the inner reader is left at the next message.
#[derive(Debug)]
pub struct Limited<R> {
    inner: R,
    remaining: u64,
    exact: bool,
}

impl<R> Limited<R> {
    /// Yields at most `limit` bytes; an earlier end of input is a normal EOF.
    pub fn new(inner: R, limit: u64) -> Self {
        Limited {
            inner,
            remaining: limit,
            exact: false,
        }
    }

    /// Yields exactly `len` bytes; an earlier end of input is `UnexpectedEof`.
    pub fn exact(inner: R, len: u64) -> Self {
        Limited {
            inner,
            remaining: len,
            exact: true,
        }
    }

    /// Bytes that may still be read.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The inner reader, mutably (reading from it directly bypasses the count).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Gives back the inner reader.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.remaining == 0 || buf.is_empty() {
            return Ok(0);
        }
        let max = clip(self.remaining, buf.len());
        let n = self.inner.read(&mut buf[..max])?;
        if n == 0 && self.exact {
            return Err(Error::ShortRead {
                missing: self.remaining,
            }
            .into());
        }
        self.remaining -= n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Limited<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.remaining == 0 {
            return Ok(&[]);
        }
        let available = self.inner.fill_buf()?;
        if available.is_empty() && self.exact {
            return Err(Error::ShortRead {
                missing: self.remaining,
            }
            .into());
        }
        let max = clip(self.remaining, available.len());
        Ok(&available[..max])
    }

    fn consume(&mut self, amt: usize) {
        let amt = clip(self.remaining, amt);
        self.inner.consume(amt);
        self.remaining -= amt as u64;
    }
}

/// `len` clipped to a `u64` budget.
fn clip(budget: u64, len: usize) -> usize {
    usize::try_from(budget).map_or(len, |b| b.min(len))
}

/// A writer that accepts at most `limit` bytes and fails on any byte past it.
///
/// A write that straddles the limit writes the part that fits (a short write); the next write
/// fails with `InvalidInput` ([`Error::WriteLimitExceeded`]). [`LimitedWriter::finish`] checks
/// that the whole length was written, for bodies with a declared length.
#[derive(Debug)]
pub struct LimitedWriter<W> {
    inner: W,
    remaining: u64,
    limit: u64,
}

impl<W> LimitedWriter<W> {
    /// Accepts at most `limit` bytes.
    pub fn new(inner: W, limit: u64) -> Self {
        LimitedWriter {
            inner,
            remaining: limit,
            limit,
        }
    }

    /// Bytes that may still be written.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The inner writer, mutably (writing to it directly bypasses the count).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Gives back the inner writer whether or not the limit was reached.
    pub fn into_inner(self) -> W {
        self.inner
    }

    /// Gives back the inner writer if exactly `limit` bytes were written, else `InvalidInput`
    /// ([`Error::ShortWrite`]).
    pub fn finish(self) -> io::Result<W> {
        if self.remaining > 0 {
            return Err(Error::ShortWrite {
                missing: self.remaining,
            }
            .into());
        }
        Ok(self.inner)
    }
}

impl<W: Write> Write for LimitedWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.remaining == 0 {
            return Err(Error::WriteLimitExceeded { limit: self.limit }.into());
        }
        let max = clip(self.remaining, buf.len());
        let n = self.inner.write(&buf[..max])?;
        self.remaining -= n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    #[test]
    fn at_most_stops_at_the_limit_and_leaves_the_rest() {
        let mut input: &[u8] = b"hello world";
        let mut limited = Limited::new(&mut input, 5);
        let mut out = String::new();
        limited.read_to_string(&mut out).unwrap();
        assert_eq!(out, "hello");
        assert_eq!(input, b" world");
    }

    #[test]
    fn at_most_accepts_a_shorter_input() {
        let mut limited = Limited::new(&b"abc"[..], 10);
        let mut out = Vec::new();
        limited.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"abc");
        assert_eq!(limited.remaining(), 7);
    }

    #[test]
    fn exact_turns_early_eof_into_unexpected_eof() {
        let mut limited = Limited::exact(&b"abc"[..], 10);
        let mut out = Vec::new();
        let err = limited.read_to_end(&mut out).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(matches!(
            Error::from_io(&err),
            Some(Error::ShortRead { missing: 7 })
        ));
        assert_eq!(out, b"abc");
    }

    #[test]
    fn exact_at_full_length_is_a_clean_eof() {
        let mut limited = Limited::exact(&b"abcdef"[..], 3);
        let mut out = Vec::new();
        limited.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"abc");
    }

    #[test]
    fn zero_length_buffer_reads_nothing() {
        let mut limited = Limited::exact(&b""[..], 3);
        assert_eq!(limited.read(&mut []).unwrap(), 0);
        assert_eq!(limited.remaining(), 3);
    }

    #[test]
    fn bufread_view_is_clipped_to_the_limit() {
        let mut limited = Limited::exact(BufReader::new(&b"line one\nline two\n"[..]), 12);
        let mut line = String::new();
        limited.read_line(&mut line).unwrap();
        assert_eq!(line, "line one\n");
        line.clear();
        limited.read_line(&mut line).unwrap();
        assert_eq!(line, "lin");
        assert_eq!(limited.fill_buf().unwrap(), b"");
    }

    #[test]
    fn bufread_exact_reports_early_eof() {
        let mut limited = Limited::exact(&b"ab"[..], 5);
        limited.consume(2);
        assert_eq!(
            limited.fill_buf().unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
    }

    #[test]
    fn inner_error_in_the_middle_passes_through() {
        struct Failing(u8);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("boom"));
                }
                self.0 -= 1;
                buf[0] = b'x';
                Ok(1)
            }
        }
        let mut limited = Limited::exact(Failing(2), 5);
        let mut out = Vec::new();
        assert_eq!(
            limited.read_to_end(&mut out).unwrap_err().to_string(),
            "boom"
        );
        assert_eq!(limited.remaining(), 3);
    }

    #[test]
    fn writer_refuses_bytes_past_the_limit() {
        let mut w = LimitedWriter::new(Vec::new(), 4);
        assert_eq!(w.write(b"abcdef").unwrap(), 4);
        let err = w.write(b"g").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("4 bytes"));
        assert_eq!(w.write(b"").unwrap(), 0);
        assert_eq!(w.into_inner(), b"abcd");
    }

    #[test]
    fn writer_write_all_past_the_limit_fails() {
        let mut w = LimitedWriter::new(Vec::new(), 4);
        assert!(w.write_all(b"abcdef").is_err());
    }

    #[test]
    fn writer_finish_checks_the_full_length() {
        let mut w = LimitedWriter::new(Vec::new(), 4);
        w.write_all(b"abc").unwrap();
        let err = w.finish().unwrap_err();
        assert!(matches!(
            Error::from_io(&err),
            Some(Error::ShortWrite { missing: 1 })
        ));
        let mut w = LimitedWriter::new(Vec::new(), 3);
        w.write_all(b"abc").unwrap();
        assert_eq!(w.finish().unwrap(), b"abc");
    }
}
