//! The CSPRNG (OpenSSL's DRBG, seeded by the OS): fill buffers, or read random bytes as a stream.
//! For long-term keys; values drawn per request are cheaper from [`crate::rng`].

use std::io;

use crate::error::Result;

/// Fills `buf` with cryptographically secure random bytes.
pub fn random_bytes(buf: &mut [u8]) -> Result<()> {
    // One call, no yield inside: OpenSSL's per-thread DRBG is only touched on this thread.
    openssl::rand::rand_bytes(buf)?;
    Ok(())
}

/// A fresh vector of `len` random bytes.
pub fn random_vec(len: usize) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    random_bytes(&mut buf)?;
    Ok(buf)
}

/// An endless `Read` source of cryptographically secure random bytes.
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomReader;

impl io::Read for RandomReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        random_bytes(buf)?;
        Ok(buf.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn two_draws_differ() {
        let a = random_vec(32).unwrap();
        let b = random_vec(32).unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }

    #[test]
    fn reader_fills_whole_buffer() {
        let mut buf = [0u8; 4096];
        RandomReader.read_exact(&mut buf).unwrap();
        // 4096 zero bytes from a CSPRNG would be a failure, not bad luck.
        assert!(buf.iter().any(|&b| b != 0));
        let mut limited = Vec::new();
        RandomReader.take(100).read_to_end(&mut limited).unwrap();
        assert_eq!(limited.len(), 100);
    }
}
