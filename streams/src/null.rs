//! Null and zero streams, built from std's `empty`, `sink` and `repeat`.

use std::io;

use crate::{Duplex, Limited};

/// Mordor's NullStream: reads are at EOF at once, writes are discarded.
pub fn null() -> Duplex<io::Empty, io::Sink> {
    Duplex::new(io::empty(), io::sink())
}

/// An endless source of zero bytes.
pub fn zero() -> io::Repeat {
    io::repeat(0)
}

/// `len` zero bytes, then EOF.
pub fn zeros(len: u64) -> Limited<io::Repeat> {
    Limited::new(zero(), len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn null_reads_nothing_and_takes_everything() {
        let mut n = null();
        assert_eq!(n.read(&mut [1; 8]).unwrap(), 0);
        assert_eq!(n.write(&[1; 8]).unwrap(), 8);
    }

    #[test]
    fn zeros_are_zero_and_end_where_asked() {
        let mut out = Vec::new();
        zeros(100_000).read_to_end(&mut out).unwrap();
        assert_eq!(out.len(), 100_000);
        assert!(out.iter().all(|&b| b == 0));
        let mut buf = [9u8; 16];
        zero().read_exact(&mut buf).unwrap();
        assert_eq!(buf, [0; 16]);
    }
}
