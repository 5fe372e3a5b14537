//! Hash streams (Mordor's `HashStream`): readers and writers that feed every byte passing
//! through into a [`Hasher`](crate::Hasher) or [`Hmac`](crate::Hmac) (or any `Write` sink).

use std::io::{self, Read, Write};

/// Reads from `R` and feeds every byte read into `H`.
#[derive(Debug)]
pub struct HashReader<R, H> {
    inner: R,
    hasher: H,
}

impl<R: Read, H: Write> HashReader<R, H> {
    /// Wraps `inner`, hashing into `hasher`.
    pub fn new(inner: R, hasher: H) -> Self {
        HashReader { inner, hasher }
    }

    /// The hasher, e.g. to call `finish()` on it.
    pub fn hasher_mut(&mut self) -> &mut H {
        &mut self.hasher
    }

    /// The wrapped reader.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Unwraps into the reader and the hasher.
    pub fn into_parts(self) -> (R, H) {
        (self.inner, self.hasher)
    }
}

impl<R: Read, H: Write> Read for HashReader<R, H> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.write_all(&buf[..n])?;
        Ok(n)
    }
}

/// Writes to `W` and feeds every byte written into `H`.
#[derive(Debug)]
pub struct HashWriter<W, H> {
    inner: W,
    hasher: H,
}

impl<W: Write, H: Write> HashWriter<W, H> {
    /// Wraps `inner`, hashing into `hasher`.
    pub fn new(inner: W, hasher: H) -> Self {
        HashWriter { inner, hasher }
    }

    /// The hasher, e.g. to call `finish()` on it.
    pub fn hasher_mut(&mut self) -> &mut H {
        &mut self.hasher
    }

    /// The wrapped writer.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Unwraps into the writer and the hasher.
    pub fn into_parts(self) -> (W, H) {
        (self.inner, self.hasher)
    }
}

impl<W: Write, H: Write> Write for HashWriter<W, H> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.write_all(&buf[..n])?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{hash, Hasher, Hmac};

    #[test]
    fn reader_hashes_what_passes() {
        let data = vec![42u8; 100_000];
        let mut reader = HashReader::new(&data[..], Hasher::new("sha256").unwrap());
        let mut copy = Vec::new();
        reader.read_to_end(&mut copy).unwrap();
        assert_eq!(copy, data);
        let digest = reader.hasher_mut().finish().unwrap();
        assert_eq!(digest, hash("sha256", &data).unwrap());
    }

    #[test]
    fn writer_hashes_what_passes() {
        let mut writer = HashWriter::new(Vec::new(), Hmac::new("hmac-sha1", b"k").unwrap());
        writer.write_all(b"hello ").unwrap();
        writer.write_all(b"world").unwrap();
        let (written, mut mac) = writer.into_parts();
        assert_eq!(written, b"hello world");
        let expected = crate::hmac("hmac-sha1", b"k", b"hello world").unwrap();
        assert!(mac.verify(&expected).unwrap());
    }
}
