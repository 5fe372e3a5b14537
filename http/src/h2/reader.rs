//! Reading whole frames off the connection: a buffer that keeps a partial frame across a
//! timed-out read, so the read can be retried. Reads go through `read_within`, which after a
//! read that emptied the socket waits for the next readiness report instead of trying a read
//! that would find nothing (one `EAGAIN` read less per request when each request arrives
//! alone, as at one stream per connection).

use std::io;
use std::time::Duration;

use super::frame::HEADER_LEN;
use crate::ws::Timed;

/// Reads whole frames, keeping a partial one across a timed-out read.
pub(super) struct FrameReader<'r> {
    pub(super) io: &'r mut dyn Timed,
    /// How long a read waits for the client (then `TimedOut`).
    wait: Duration,
    buf: Vec<u8>,
    pos: usize,
    filled: usize,
}

impl<'r> FrameReader<'r> {
    /// Frames from `io`, each read waiting at most `wait`.
    pub(super) fn new(io: &'r mut dyn Timed, wait: Duration) -> FrameReader<'r> {
        FrameReader {
            io,
            wait,
            buf: vec![0; 16 * 1024],
            pos: 0,
            filled: 0,
        }
    }

    /// Whether part of a frame is buffered.
    pub(super) fn partial(&self) -> bool {
        self.pos < self.filled
    }

    /// Reads until `n` bytes are buffered.
    pub(super) fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.filled - self.pos >= n {
            return Ok(());
        }
        if self.pos + n > self.buf.len() {
            self.buf.copy_within(self.pos..self.filled, 0);
            self.filled -= self.pos;
            self.pos = 0;
            if n > self.buf.len() {
                self.buf.resize(n, 0);
            }
        }
        while self.filled - self.pos < n {
            let got = self
                .io
                .read_within(&mut self.buf[self.filled..], self.wait)?
                .ok_or(io::ErrorKind::TimedOut)?;
            if got == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.filled += got;
        }
        Ok(())
    }

    /// Consumes `n` buffered bytes.
    pub(super) fn take(&mut self, n: usize) -> &[u8] {
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        s
    }

    /// The buffered frame header.
    pub(super) fn header(&self) -> &[u8; HEADER_LEN] {
        self.buf[self.pos..self.pos + HEADER_LEN]
            .try_into()
            .unwrap_or(&[0; HEADER_LEN])
    }

    /// Consumes a frame header and its `len`-byte payload; returns the payload.
    pub(super) fn frame(&mut self, len: usize) -> &[u8] {
        self.pos += HEADER_LEN;
        self.take(len)
    }
}
