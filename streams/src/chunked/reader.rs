//! The chunked decoder: a `Read`/`BufRead` over the chunk data of a `BufRead`.

use std::io::{self, BufRead, Read};

use super::grammar::{parse_size_line, parse_trailer_line, strip_crlf};
use super::{ChunkedLimits, TrailerField};
use crate::{read_until_limit, Error};

/// Where the decoder is in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a chunk-size line.
    SizeLine,
    /// Inside chunk data, with this many bytes left.
    Data(u64),
    /// Reading the CRLF after chunk data.
    DataEnd,
    /// Reading trailer field lines up to the empty line.
    Trailers,
    /// The body is complete; the inner reader is at the byte after it.
    Done,
    /// A protocol error was reported; nothing more is read.
    Failed,
}

/// How a bounded line read ended.
enum Line {
    Complete,
    TooLong,
    Eof,
}

/// Decodes a chunked body from a `BufRead`, yielding the chunk data.
///
/// It never reads past the end of the body, so after EOF ([`ChunkedReader::is_done`]) the inner
/// reader is positioned at the next message (HTTP keep-alive). Malformed input is `InvalidData`,
/// a body cut short is `UnexpectedEof`, both carrying an [`Error`] that says what was wrong. An
/// I/O error from the inner reader (a timeout, say) leaves the decoder able to resume; a protocol
/// error does not.
#[derive(Debug)]
pub struct ChunkedReader<R> {
    inner: R,
    state: State,
    limits: ChunkedLimits,
    line: Vec<u8>,
    extensions_seen: usize,
    trailer_bytes: usize,
    trailers: Vec<TrailerField>,
}

impl<R: BufRead> ChunkedReader<R> {
    /// Decodes from `inner` with the default [`ChunkedLimits`].
    pub fn new(inner: R) -> Self {
        Self::with_limits(inner, ChunkedLimits::default())
    }

    /// Decodes from `inner` with the given limits.
    pub fn with_limits(inner: R, limits: ChunkedLimits) -> Self {
        ChunkedReader {
            inner,
            state: State::SizeLine,
            limits,
            line: Vec::new(),
            extensions_seen: 0,
            trailer_bytes: 0,
            trailers: Vec::new(),
        }
    }

    /// Whether the last chunk and the trailer section have been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// The trailer fields, complete once [`ChunkedReader::is_done`].
    pub fn trailers(&self) -> &[TrailerField] {
        &self.trailers
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The inner reader, mutably (reading from it directly corrupts the decoding).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Gives back the inner reader, positioned after the body if it is done.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Moves to `Failed` and returns the error.
    fn fail(&mut self, err: Error) -> io::Error {
        self.state = State::Failed;
        err.into()
    }

    /// Reads one line into `self.line`, bounded so the whole line stays within `limit` bytes.
    fn read_line(&mut self, limit: usize) -> io::Result<Line> {
        let room = limit.saturating_sub(self.line.len());
        match read_until_limit(&mut self.inner, b'\n', room, &mut self.line) {
            Ok(_) if self.line.ends_with(b"\n") => Ok(Line::Complete),
            Ok(_) => Ok(Line::Eof),
            Err(e) if matches!(Error::from_io(&e), Some(Error::DelimiterNotFound { .. })) => {
                Ok(Line::TooLong)
            }
            Err(e) => Err(e),
        }
    }

    /// Runs the framing states until chunk data is available or the body is done.
    fn advance(&mut self) -> io::Result<()> {
        loop {
            match self.state {
                State::Data(_) | State::Done => return Ok(()),
                State::Failed => return Err(Error::Poisoned("chunked decoder").into()),
                State::SizeLine => self.size_line()?,
                State::DataEnd => self.data_end()?,
                State::Trailers => self.trailer_line()?,
            }
        }
    }

    fn size_line(&mut self) -> io::Result<()> {
        let limit = self.limits.size_line;
        match self.read_line(limit)? {
            Line::TooLong => return Err(self.fail(Error::ChunkLineTooLong { limit })),
            Line::Eof => return Err(self.fail(Error::ChunkedTruncated("chunk-size line"))),
            Line::Complete => {}
        }
        let parsed = match strip_crlf(&self.line) {
            Some(body) => parse_size_line(body),
            None => Err(Error::InvalidChunkSize("line not terminated by CRLF")),
        };
        self.line.clear();
        let (size, ext_len) = parsed.map_err(|e| self.fail(e))?;
        self.extensions_seen += ext_len;
        if self.extensions_seen > self.limits.extensions_total {
            let limit = self.limits.extensions_total;
            return Err(self.fail(Error::ChunkExtensionsTooLarge { limit }));
        }
        self.state = if size == 0 {
            State::Trailers
        } else {
            State::Data(size)
        };
        Ok(())
    }

    fn data_end(&mut self) -> io::Result<()> {
        match self.read_line(2)? {
            Line::Eof => return Err(self.fail(Error::ChunkedTruncated("CRLF after chunk data"))),
            Line::TooLong => return Err(self.fail(Error::MissingChunkCrlf)),
            Line::Complete => {}
        }
        let ok = self.line == b"\r\n";
        self.line.clear();
        if !ok {
            return Err(self.fail(Error::MissingChunkCrlf));
        }
        self.state = State::SizeLine;
        Ok(())
    }

    fn trailer_line(&mut self) -> io::Result<()> {
        let limit = self.limits.trailer_bytes;
        let room = limit.saturating_sub(self.trailer_bytes);
        match self.read_line(room)? {
            Line::TooLong => return Err(self.fail(Error::TrailersTooLarge { limit })),
            Line::Eof => return Err(self.fail(Error::ChunkedTruncated("trailer section"))),
            Line::Complete => {}
        }
        self.trailer_bytes += self.line.len();
        let parsed = match strip_crlf(&self.line) {
            Some([]) => Ok(None),
            Some(body) => parse_trailer_line(body).map(Some),
            None => Err(Error::InvalidTrailer("line not terminated by CRLF")),
        };
        self.line.clear();
        match parsed.map_err(|e| self.fail(e))? {
            None => self.state = State::Done,
            Some(field) => {
                if self.trailers.len() == self.limits.trailer_fields {
                    let limit = self.limits.trailer_fields;
                    return Err(self.fail(Error::TooManyTrailers { limit }));
                }
                self.trailers.push(field);
            }
        }
        Ok(())
    }
}

impl<R: BufRead> BufRead for ChunkedReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.advance()?;
        let State::Data(remaining) = self.state else {
            return Ok(&[]);
        };
        let available = self.inner.fill_buf()?;
        if available.is_empty() {
            self.state = State::Failed;
            return Err(Error::ChunkedTruncated("chunk data").into());
        }
        let n = usize::try_from(remaining).map_or(available.len(), |r| r.min(available.len()));
        Ok(&available[..n])
    }

    fn consume(&mut self, amt: usize) {
        if let State::Data(remaining) = self.state {
            let amt = usize::try_from(remaining).map_or(amt, |r| r.min(amt));
            self.inner.consume(amt);
            let left = remaining - amt as u64;
            self.state = if left == 0 {
                State::DataEnd
            } else {
                State::Data(left)
            };
        }
    }
}

impl<R: BufRead> Read for ChunkedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    fn decode(input: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        ChunkedReader::new(input).read_to_end(&mut out)?;
        Ok(out)
    }

    fn decode_err(input: &[u8]) -> io::Error {
        decode(input).expect_err("malformed input accepted")
    }

    #[test]
    fn decodes_chunks_and_stops_at_the_end_of_the_body() {
        let mut input: &[u8] = b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\nNEXT";
        let mut reader = ChunkedReader::new(&mut input);
        let mut out = String::new();
        reader.read_to_string(&mut out).unwrap();
        assert_eq!(out, "hello, world");
        assert!(reader.is_done());
        assert_eq!(input, b"NEXT");
    }

    #[test]
    fn reads_trailers() {
        let mut reader =
            ChunkedReader::new(&b"1\r\na\r\n0\r\nX-Sum: 42\r\nEtag: \"x\"\r\n\r\n"[..]);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        assert_eq!(
            reader.trailers(),
            &[
                ("X-Sum".to_string(), b"42".to_vec()),
                ("Etag".to_string(), b"\"x\"".to_vec())
            ]
        );
    }

    #[test]
    fn empty_body_is_just_the_last_chunk() {
        assert_eq!(decode(b"0\r\n\r\n").unwrap(), b"");
        assert_eq!(decode(b"000;x=y\r\n\r\n").unwrap(), b"");
    }

    #[test]
    fn one_byte_at_a_time_from_the_inner_reader() {
        let input = b"3\r\nabc\r\n2\r\nde\r\n0\r\nT: v\r\n\r\n";
        let mut reader = ChunkedReader::new(BufReader::with_capacity(1, &input[..]));
        let mut out = Vec::new();
        let mut byte = [0u8; 1];
        while reader.read(&mut byte).unwrap() == 1 {
            out.push(byte[0]);
        }
        assert_eq!(out, b"abcde");
        assert_eq!(reader.trailers().len(), 1);
    }

    #[test]
    fn zero_length_buffer_reads_nothing_and_parses_nothing() {
        let mut reader = ChunkedReader::new(&b"zz"[..]);
        assert_eq!(reader.read(&mut []).unwrap(), 0);
    }

    #[test]
    fn truncation_anywhere_is_unexpected_eof() {
        let full = b"5\r\nhello\r\n0\r\nA: b\r\n\r\n";
        for cut in 0..full.len() {
            let err = decode_err(&full[..cut]);
            assert_eq!(
                err.kind(),
                io::ErrorKind::UnexpectedEof,
                "cut at {cut}: {err}"
            );
        }
    }

    #[test]
    fn bare_lf_is_rejected_everywhere() {
        for input in [
            &b"5\nhello\r\n0\r\n\r\n"[..],
            b"5\r\nhello\n0\r\n\r\n",
            b"5\r\nhello\r\n0\n\r\n",
            b"5\r\nhello\r\n0\r\nA: b\n\r\n",
            b"5\r\nhello\r\n0\r\n\n",
        ] {
            let err = decode_err(input);
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
        }
    }

    #[test]
    fn data_longer_than_its_size_is_rejected() {
        let err = decode_err(b"3\r\nhello\r\n0\r\n\r\n");
        assert!(matches!(
            Error::from_io(&err),
            Some(Error::MissingChunkCrlf)
        ));
    }

    #[test]
    fn bad_sizes_say_why() {
        let err = decode_err(b"+5\r\nhello\r\n0\r\n\r\n");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("chunk-size"), "{err}");
        let err = decode_err(b"fffffffffffffffff\r\n");
        assert!(matches!(
            Error::from_io(&err),
            Some(Error::ChunkSizeOverflow)
        ));
    }

    #[test]
    fn huge_declared_size_with_little_data_is_truncation_not_allocation() {
        let err = decode_err(b"ffffffffffffffff\r\nabc");
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn long_size_line_is_bounded() {
        let mut input = b"5;".to_vec();
        input.extend(vec![b'a'; super::super::MAX_SIZE_LINE]);
        input.extend_from_slice(b"\r\nhello\r\n0\r\n\r\n");
        let err = decode_err(&input);
        assert!(matches!(
            Error::from_io(&err),
            Some(Error::ChunkLineTooLong { .. })
        ));
    }

    #[test]
    fn extensions_are_bounded_over_the_whole_body() {
        let limits = ChunkedLimits {
            extensions_total: 30,
            ..ChunkedLimits::default()
        };
        let mut input = Vec::new();
        for _ in 0..4 {
            input.extend_from_slice(b"1;name=value\r\nx\r\n");
        }
        input.extend_from_slice(b"0\r\n\r\n");
        let mut out = Vec::new();
        let err = ChunkedReader::with_limits(&input[..], limits)
            .read_to_end(&mut out)
            .unwrap_err();
        assert!(matches!(
            Error::from_io(&err),
            Some(Error::ChunkExtensionsTooLarge { limit: 30 })
        ));
        assert_eq!(out, b"xx");
    }

    #[test]
    fn trailers_are_bounded_in_bytes_and_count() {
        let limits = ChunkedLimits {
            trailer_bytes: 20,
            ..ChunkedLimits::default()
        };
        let input = b"0\r\nA: 0123456789\r\nB: 0123456789\r\n\r\n";
        let err = ChunkedReader::with_limits(&input[..], limits)
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        assert!(matches!(
            Error::from_io(&err),
            Some(Error::TrailersTooLarge { limit: 20 })
        ));

        let limits = ChunkedLimits {
            trailer_fields: 1,
            ..ChunkedLimits::default()
        };
        let input = b"0\r\nA: 1\r\nB: 2\r\n\r\n";
        let err = ChunkedReader::with_limits(&input[..], limits)
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        assert!(matches!(
            Error::from_io(&err),
            Some(Error::TooManyTrailers { limit: 1 })
        ));
    }

    #[test]
    fn malformed_trailer_is_invalid_data() {
        let err = decode_err(b"0\r\nNo colon here\r\n\r\n");
        assert!(matches!(
            Error::from_io(&err),
            Some(Error::InvalidTrailer(_))
        ));
    }

    #[test]
    fn after_a_protocol_error_the_decoder_stays_failed() {
        let mut reader = ChunkedReader::new(&b"x\r\n0\r\n\r\n"[..]);
        assert!(reader.read(&mut [0; 8]).is_err());
        let err = reader.read(&mut [0; 8]).unwrap_err();
        assert!(matches!(Error::from_io(&err), Some(Error::Poisoned(_))));
    }

    #[test]
    fn resumes_after_an_inner_timeout_mid_line() {
        /// Serves its parts one per read, with a timeout error between them.
        struct Stutter {
            parts: Vec<&'static [u8]>,
            pending_timeout: bool,
        }
        impl Read for Stutter {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.pending_timeout {
                    self.pending_timeout = false;
                    return Err(io::ErrorKind::TimedOut.into());
                }
                if self.parts.is_empty() {
                    return Ok(0);
                }
                self.pending_timeout = true;
                let part = self.parts.remove(0);
                buf[..part.len()].copy_from_slice(part);
                Ok(part.len())
            }
        }
        let inner = Stutter {
            parts: vec![
                b"1",
                b"0\r",
                b"\n0123456789abcdef",
                b"\r",
                b"\n0",
                b"\r\n\r\n",
            ],
            pending_timeout: false,
        };
        let mut reader = ChunkedReader::new(BufReader::new(inner));
        let mut out = Vec::new();
        let mut timeouts = 0;
        loop {
            let mut buf = [0u8; 64];
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::TimedOut => timeouts += 1,
                Err(e) => panic!("unexpected error: {e}"),
            }
        }
        assert_eq!(out, b"0123456789abcdef");
        assert!(timeouts >= 4);
    }
}
