//! The connection's read side as a `BufRead`: bytes already buffered after a request head
//! first, then the transport. Whatever is not consumed stays in the buffer for the next request.

use std::io::{self, BufRead, Read};

use crate::transport::Transport;

/// Buffered bytes (`buf[pos..filled]`) in front of the transport.
pub(crate) struct Input<'a> {
    buf: &'a mut [u8],
    pos: usize,
    filled: usize,
    io: &'a mut dyn Transport,
}

impl<'a> Input<'a> {
    /// Reads from `buf[..filled]` first, refilling `buf` from `io` once it is used up.
    pub(crate) fn new(buf: &'a mut [u8], filled: usize, io: &'a mut dyn Transport) -> Self {
        Input {
            buf,
            pos: 0,
            filled,
            io,
        }
    }

    /// Whether no byte is buffered.
    pub(crate) fn is_drained(&self) -> bool {
        self.pos == self.filled
    }

    /// Where the unconsumed bytes lie: `(pos, filled)` inside the buffer.
    pub(crate) fn position(&self) -> (usize, usize) {
        (self.pos, self.filled)
    }

    /// The transport, for writes that must happen mid-read (`100 Continue`).
    pub(crate) fn transport(&mut self) -> &mut dyn Transport {
        &mut *self.io
    }
}

impl BufRead for Input<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.filled {
            let n = self.io.read(self.buf)?;
            self.pos = 0;
            self.filled = n;
        }
        Ok(&self.buf[self.pos..self.filled])
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.filled);
    }
}

impl Read for Input<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        // Large reads with nothing buffered go straight to the caller's buffer.
        if self.pos == self.filled && out.len() >= self.buf.len() {
            return self.io.read(out);
        }
        let avail = self.fill_buf()?;
        let n = avail.len().min(out.len());
        out[..n].copy_from_slice(&avail[..n]);
        self.consume(n);
        Ok(n)
    }
}
