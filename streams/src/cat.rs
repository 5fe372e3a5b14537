//! [`Cat`]: several readers read one after another.

use std::collections::VecDeque;
use std::io::{self, Read};

/// Reads its readers in order, moving to the next at each one's EOF (an n-ary `Read::chain`).
///
/// Readers of different types go in as `Box<dyn Read + Send>`.
#[derive(Debug)]
pub struct Cat<R> {
    parts: VecDeque<R>,
}

impl<R: Read> Cat<R> {
    /// Reads the given readers in order.
    pub fn new(parts: impl IntoIterator<Item = R>) -> Self {
        Cat {
            parts: parts.into_iter().collect(),
        }
    }

    /// Appends a reader to read after the others.
    pub fn push(&mut self, part: R) {
        self.parts.push_back(part);
    }

    /// Readers not yet exhausted, the current one first.
    pub fn remaining(&self) -> usize {
        self.parts.len()
    }
}

impl<R: Read> Read for Cat<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        while let Some(current) = self.parts.front_mut() {
            match current.read(buf)? {
                0 => {
                    self.parts.pop_front();
                }
                n => return Ok(n),
            }
        }
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_parts_in_order_skipping_empty_ones() {
        let mut cat = Cat::new([&b"ab"[..], b"", b"cd", b""]);
        cat.push(b"e");
        let mut out = String::new();
        cat.read_to_string(&mut out).unwrap();
        assert_eq!(out, "abcde");
        assert_eq!(cat.remaining(), 0);
    }

    #[test]
    fn no_parts_is_eof_and_zero_length_is_a_no_op() {
        let mut cat: Cat<&[u8]> = Cat::new([]);
        assert_eq!(cat.read(&mut [0; 4]).unwrap(), 0);
        let mut cat = Cat::new([&b"x"[..]]);
        assert_eq!(cat.read(&mut []).unwrap(), 0);
        assert_eq!(cat.remaining(), 1);
    }

    #[test]
    fn mixed_types_through_boxes_and_errors_in_the_middle() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("middle"))
            }
        }
        let parts: Vec<Box<dyn Read + Send>> = vec![
            Box::new(&b"ok"[..]),
            Box::new(Failing),
            Box::new(&b"never"[..]),
        ];
        let mut cat = Cat::new(parts);
        let mut out = Vec::new();
        let err = cat.read_to_end(&mut out).unwrap_err();
        assert_eq!(err.to_string(), "middle");
        assert_eq!(out, b"ok");
    }
}
