//! Tees: [`TeeReader`] copies what is read to a writer, [`TeeWriter`] duplicates writes.

use std::io::{self, Read, Write};

/// A reader that writes a copy of every byte it yields to a side writer.
///
/// The copy is written before the bytes are returned; if the side writer fails, the read fails
/// with its error (the bytes it concerned are consumed from the inner reader).
#[derive(Debug)]
pub struct TeeReader<R, W> {
    reader: R,
    side: W,
}

impl<R: Read, W: Write> TeeReader<R, W> {
    /// Reads from `reader`, copying to `side`.
    pub fn new(reader: R, side: W) -> Self {
        TeeReader { reader, side }
    }

    /// Gives back the reader and the side writer.
    pub fn into_parts(self) -> (R, W) {
        (self.reader, self.side)
    }
}

impl<R: Read, W: Write> Read for TeeReader<R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.reader.read(buf)?;
        self.side.write_all(&buf[..n])?;
        Ok(n)
    }
}

/// A writer that writes everything to two writers.
///
/// Each `write` goes to the first writer (which may take part of it), then that same part goes
/// whole to the second, so both always hold the same bytes.
#[derive(Debug)]
pub struct TeeWriter<A, B> {
    first: A,
    second: B,
}

impl<A: Write, B: Write> TeeWriter<A, B> {
    /// Writes to `first` and `second`.
    pub fn new(first: A, second: B) -> Self {
        TeeWriter { first, second }
    }

    /// Gives back both writers.
    pub fn into_parts(self) -> (A, B) {
        (self.first, self.second)
    }
}

impl<A: Write, B: Write> Write for TeeWriter<A, B> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.first.write(buf)?;
        self.second.write_all(&buf[..n])?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.first.flush()?;
        self.second.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_copies_exactly_what_it_yields() {
        let mut tee = TeeReader::new(&b"hello world"[..], Vec::new());
        let mut first = [0u8; 5];
        tee.read_exact(&mut first).unwrap();
        let (rest, side) = tee.into_parts();
        assert_eq!(side, b"hello");
        assert_eq!(rest, b" world");
    }

    #[test]
    fn reader_eof_and_zero_length() {
        let mut tee = TeeReader::new(&b""[..], Vec::new());
        assert_eq!(tee.read(&mut [0; 4]).unwrap(), 0);
        assert_eq!(tee.read(&mut []).unwrap(), 0);
    }

    #[test]
    fn reader_fails_when_the_side_fails() {
        let mut side = [0u8; 2];
        let mut tee = TeeReader::new(&b"abcd"[..], &mut side[..]);
        assert_eq!(
            tee.read(&mut [0; 4]).unwrap_err().kind(),
            io::ErrorKind::WriteZero
        );
    }

    #[test]
    fn writer_duplicates_including_short_writes() {
        let mut short = [0u8; 3];
        let mut tee = TeeWriter::new(&mut short[..], Vec::new());
        assert_eq!(tee.write(b"abcdef").unwrap(), 3);
        let (_, second) = tee.into_parts();
        assert_eq!(second, b"abc");
        assert_eq!(short, *b"abc");
    }

    #[test]
    fn writer_write_all_and_flush() {
        let mut tee = TeeWriter::new(Vec::new(), Vec::new());
        tee.write_all(b"same").unwrap();
        tee.flush().unwrap();
        let (a, b) = tee.into_parts();
        assert_eq!(a, b);
        assert_eq!(a, b"same");
    }
}
