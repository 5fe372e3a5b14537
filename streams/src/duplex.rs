//! [`Duplex`]: one reader and one writer used as a single stream.

use std::io::{self, BufRead, Read, Write};

/// A `Read + Write` stream made of a separate reader and writer (Mordor's DuplexStream).
#[derive(Debug)]
pub struct Duplex<R, W> {
    reader: R,
    writer: W,
}

impl<R, W> Duplex<R, W> {
    /// Reads from `reader`, writes to `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        Duplex { reader, writer }
    }

    /// The read half.
    pub fn reader(&mut self) -> &mut R {
        &mut self.reader
    }

    /// The write half.
    pub fn writer(&mut self) -> &mut W {
        &mut self.writer
    }

    /// Gives back both halves.
    pub fn into_parts(self) -> (R, W) {
        (self.reader, self.writer)
    }
}

impl<R: Read, W> Read for Duplex<R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}

impl<R: BufRead, W> BufRead for Duplex<R, W> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.reader.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.reader.consume(amt)
    }
}

impl<R, W: Write> Write for Duplex<R, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_from_one_side_and_writes_to_the_other() {
        let mut d = Duplex::new(&b"in"[..], Vec::new());
        let mut s = String::new();
        d.read_to_string(&mut s).unwrap();
        d.write_all(b"out").unwrap();
        d.flush().unwrap();
        assert_eq!(s, "in");
        assert_eq!(d.into_parts().1, b"out");
    }

    #[test]
    fn bufread_passes_through() {
        let mut d = Duplex::new(&b"line\nrest"[..], io::sink());
        let mut line = String::new();
        d.read_line(&mut line).unwrap();
        assert_eq!(line, "line\n");
        assert_eq!(d.fill_buf().unwrap(), b"rest");
    }
}
