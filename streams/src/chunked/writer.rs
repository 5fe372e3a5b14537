//! The chunked encoder: every `write` becomes one chunk; `finish` writes the last chunk.

use std::io::{self, IoSlice, Write};

use crate::http_grammar::{is_field_value, is_token};
use crate::Error;

/// Longest chunk header: 16 hex digits and CRLF.
const MAX_HEADER: usize = 18;

/// Encodes everything written to it as chunks of the HTTP/1.1 chunked coding.
///
/// Each non-empty `write` emits one chunk, header, data and CRLF in one vectored write (wrap
/// it around a buffered writer to coalesce small writes into fewer chunks). An empty `write`
/// emits nothing, since a zero-size chunk would end the body. The body ends only with
/// [`ChunkedWriter::finish`] or [`ChunkedWriter::finish_with_trailers`]: dropping the writer
/// leaves the body unterminated, which is how an aborted response must look to the peer.
#[derive(Debug)]
pub struct ChunkedWriter<W: Write> {
    inner: W,
    failed: bool,
}

impl<W: Write> ChunkedWriter<W> {
    /// Encodes into `inner`.
    pub fn new(inner: W) -> Self {
        ChunkedWriter {
            inner,
            failed: false,
        }
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The inner writer, mutably (writing to it directly corrupts the encoding).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Writes the last chunk and an empty trailer section; gives back the inner writer.
    pub fn finish(self) -> io::Result<W> {
        self.finish_with_trailers(&[])
    }

    /// Writes the last chunk and the given trailer fields; gives back the inner writer.
    ///
    /// A name that is not a token or a value with CR, LF or other control bytes is
    /// `InvalidInput` and nothing is written.
    pub fn finish_with_trailers(mut self, trailers: &[(&str, &[u8])]) -> io::Result<W> {
        if self.failed {
            return Err(Error::Poisoned("chunked encoder").into());
        }
        let mut tail = b"0\r\n".to_vec();
        for (name, value) in trailers {
            if !is_token(name.as_bytes()) {
                return Err(Error::InvalidArgument("trailer name is not a token").into());
            }
            if !is_field_value(value) {
                return Err(Error::InvalidArgument("trailer value holds a control byte").into());
            }
            tail.extend_from_slice(name.as_bytes());
            tail.extend_from_slice(b": ");
            tail.extend_from_slice(value);
            tail.extend_from_slice(b"\r\n");
        }
        tail.extend_from_slice(b"\r\n");
        self.inner.write_all(&tail)?;
        Ok(self.inner)
    }
}

impl<W: Write> Write for ChunkedWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.failed {
            return Err(Error::Poisoned("chunked encoder").into());
        }
        if buf.is_empty() {
            return Ok(0);
        }
        let mut header = [0u8; MAX_HEADER];
        let header = chunk_header(buf.len(), &mut header);
        let result = write_all_parts(&mut self.inner, &[header, buf, b"\r\n"]);
        if result.is_err() {
            self.failed = true;
        }
        result.map(|()| buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Formats `len` as upper-case hex followed by CRLF.
fn chunk_header(len: usize, out: &mut [u8; MAX_HEADER]) -> &[u8] {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let digits = ((usize::BITS - len.leading_zeros()).div_ceil(4) as usize).max(1);
    for (i, slot) in out[..digits].iter_mut().enumerate() {
        let shift = 4 * (digits - 1 - i);
        *slot = HEX[(len >> shift) & 0xf];
    }
    out[digits..digits + 2].copy_from_slice(b"\r\n");
    &out[..digits + 2]
}

/// Writes every part in order, with vectored writes where the writer supports them.
fn write_all_parts<W: Write>(w: &mut W, parts: &[&[u8]]) -> io::Result<()> {
    let (mut index, mut offset) = (0, 0);
    while index < parts.len() {
        let slices: Vec<IoSlice<'_>> = std::iter::once(&parts[index][offset..])
            .chain(parts[index + 1..].iter().copied())
            .map(IoSlice::new)
            .collect();
        let mut written = match w.write_vectored(&slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        while index < parts.len() && written >= parts[index].len() - offset {
            written -= parts[index].len() - offset;
            index += 1;
            offset = 0;
        }
        offset += written;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_minimal_upper_hex() {
        let mut buf = [0u8; MAX_HEADER];
        assert_eq!(chunk_header(1, &mut buf), b"1\r\n");
        assert_eq!(chunk_header(255, &mut buf), b"FF\r\n");
        assert_eq!(chunk_header(4096, &mut buf), b"1000\r\n");
        assert_eq!(chunk_header(usize::MAX, &mut buf), b"FFFFFFFFFFFFFFFF\r\n");
    }

    #[test]
    fn each_write_is_one_chunk_and_finish_ends_the_body() {
        let mut w = ChunkedWriter::new(Vec::new());
        w.write_all(b"hello").unwrap();
        assert_eq!(w.write(b"").unwrap(), 0);
        w.write_all(b", world").unwrap();
        assert_eq!(
            w.finish().unwrap(),
            b"5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n"
        );
    }

    #[test]
    fn trailers_are_written_and_checked() {
        let w = ChunkedWriter::new(Vec::new());
        let out = w.finish_with_trailers(&[("X-Sum", b"42")]).unwrap();
        assert_eq!(out, b"0\r\nX-Sum: 42\r\n\r\n");
        let err = ChunkedWriter::new(Vec::new())
            .finish_with_trailers(&[("X-Bad", b"a\r\nInjected: 1")])
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let err = ChunkedWriter::new(Vec::new())
            .finish_with_trailers(&[("Bad Name", b"v")])
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    /// Accepts at most `max` bytes per call, and fails once `fail_after` bytes are in.
    struct Trickle {
        out: Vec<u8>,
        max: usize,
        fail_after: usize,
    }

    impl Write for Trickle {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.out.len() >= self.fail_after {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.max);
            self.out.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn short_inner_writes_still_produce_the_whole_chunk() {
        let inner = Trickle {
            out: Vec::new(),
            max: 3,
            fail_after: usize::MAX,
        };
        let mut w = ChunkedWriter::new(inner);
        w.write_all(b"0123456789").unwrap();
        assert_eq!(w.finish().unwrap().out, b"A\r\n0123456789\r\n0\r\n\r\n");
    }

    #[test]
    fn an_error_mid_chunk_poisons_the_writer() {
        let inner = Trickle {
            out: Vec::new(),
            max: 4,
            fail_after: 4,
        };
        let mut w = ChunkedWriter::new(inner);
        assert_eq!(
            w.write(b"0123456789").unwrap_err().kind(),
            io::ErrorKind::BrokenPipe
        );
        let err = w.write(b"x").unwrap_err();
        assert!(matches!(Error::from_io(&err), Some(Error::Poisoned(_))));
        assert!(w.finish().is_err());
    }
}
