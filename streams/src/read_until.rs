//! `read_until_limit`: a delimited read that refuses to grow without bound.

use std::io::{self, BufRead};

use crate::Error;

/// Appends bytes from `reader` to `buf` up to and including `delim`, reading at most `limit` bytes.
///
/// Returns the number of bytes appended. Like `BufRead::read_until`:
/// - the delimiter, when found, is the last byte appended;
/// - at end of input the bytes read so far are appended without a delimiter (0 at once at EOF);
/// - on an error the bytes already consumed stay in `buf`, so a caller can resume.
///
/// When `limit` bytes have been read without meeting `delim` (the limit counts the delimiter),
/// those bytes are in `buf` and the call fails with `InvalidData`
/// ([`Error::DelimiterNotFound`]) instead of reading further.
pub fn read_until_limit<R: BufRead + ?Sized>(
    reader: &mut R,
    delim: u8,
    limit: usize,
    buf: &mut Vec<u8>,
) -> io::Result<usize> {
    let mut read = 0;
    loop {
        if read == limit {
            return Err(Error::DelimiterNotFound { limit }.into());
        }
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(read);
        }
        let window = &available[..available.len().min(limit - read)];
        let (taken, found) = match memchr::memchr(delim, window) {
            Some(i) => (i + 1, true),
            None => (window.len(), false),
        };
        buf.extend_from_slice(&window[..taken]);
        reader.consume(taken);
        read += taken;
        if found {
            return Ok(read);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    #[test]
    fn stops_after_the_delimiter() {
        let mut input: &[u8] = b"abc\ndef\n";
        let mut buf = Vec::new();
        assert_eq!(
            read_until_limit(&mut input, b'\n', 10, &mut buf).unwrap(),
            4
        );
        assert_eq!(buf, b"abc\n");
        assert_eq!(input, b"def\n");
    }

    #[test]
    fn delimiter_exactly_at_the_limit_is_accepted() {
        let mut input: &[u8] = b"abc\n";
        let mut buf = Vec::new();
        assert_eq!(read_until_limit(&mut input, b'\n', 4, &mut buf).unwrap(), 4);
    }

    #[test]
    fn missing_delimiter_within_limit_is_invalid_data() {
        let mut input: &[u8] = b"abcdef\n";
        let mut buf = Vec::new();
        let err = read_until_limit(&mut input, b'\n', 4, &mut buf).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(matches!(
            Error::from_io(&err),
            Some(Error::DelimiterNotFound { limit: 4 })
        ));
        assert_eq!(buf, b"abcd");
        assert_eq!(input, b"ef\n");
    }

    #[test]
    fn eof_without_delimiter_returns_what_was_read() {
        let mut input: &[u8] = b"abc";
        let mut buf = Vec::new();
        assert_eq!(
            read_until_limit(&mut input, b'\n', 10, &mut buf).unwrap(),
            3
        );
        assert_eq!(buf, b"abc");
        assert_eq!(
            read_until_limit(&mut input, b'\n', 10, &mut buf).unwrap(),
            0
        );
    }

    #[test]
    fn works_across_small_buffer_refills() {
        let mut reader = BufReader::with_capacity(2, &b"hello world\nrest"[..]);
        let mut buf = Vec::new();
        assert_eq!(
            read_until_limit(&mut reader, b'\n', 64, &mut buf).unwrap(),
            12
        );
        assert_eq!(buf, b"hello world\n");
    }

    #[test]
    fn limit_zero_fails_before_reading() {
        let mut input: &[u8] = b"x";
        let mut buf = Vec::new();
        assert!(read_until_limit(&mut input, b'\n', 0, &mut buf).is_err());
        assert_eq!(input, b"x");
    }
}
