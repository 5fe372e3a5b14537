//! [`Counting`]: counts the bytes read from and written to a stream.

use std::io::{self, BufRead, Read, Write};

/// A stream wrapper that counts bytes read and written through it.
#[derive(Debug, Default)]
pub struct Counting<S> {
    inner: S,
    read: u64,
    written: u64,
}

impl<S> Counting<S> {
    /// Counts traffic through `inner`, starting at zero.
    pub fn new(inner: S) -> Self {
        Counting {
            inner,
            read: 0,
            written: 0,
        }
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// The inner stream.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner stream, mutably (traffic through it directly is not counted).
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Gives back the inner stream.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: Read> Read for Counting<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

impl<S: BufRead> BufRead for Counting<S> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt);
        self.read += amt as u64;
    }
}

impl<S: Write> Write for Counting<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_reads_bufreads_and_writes() {
        let mut c = Counting::new(io::Cursor::new(b"line\nmore".to_vec()));
        let mut line = String::new();
        c.read_line(&mut line).unwrap();
        assert_eq!(c.bytes_read(), 5);
        c.read_to_end(&mut Vec::new()).unwrap();
        assert_eq!(c.bytes_read(), 9);
        c.write_all(b"xyz").unwrap();
        assert_eq!(c.bytes_written(), 3);
    }

    #[test]
    fn short_writes_count_what_was_taken() {
        let mut room = [0u8; 2];
        let mut c = Counting::new(&mut room[..]);
        assert_eq!(c.write(b"abcd").unwrap(), 2);
        assert_eq!(c.write(b"e").unwrap(), 0);
        assert_eq!(c.bytes_written(), 2);
    }
}
