//! [`Metered`]: a transport that adds the bytes it reads and writes to the server's counters.

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use moria_streams::File;

use crate::counters::Counters;
use crate::transport::Transport;

/// `T`, with every byte read or written (files sent included) counted.
pub(crate) struct Metered<'a, T> {
    io: &'a mut T,
    bytes_in: &'a AtomicU64,
    bytes_out: &'a AtomicU64,
}

impl<'a, T: Transport> Metered<'a, T> {
    /// Counts `io`'s bytes into `counters`.
    pub(crate) fn new(io: &'a mut T, counters: &'a Counters) -> Self {
        Metered {
            io,
            bytes_in: &counters.bytes_in,
            bytes_out: &counters.bytes_out,
        }
    }
}

impl<T: Transport> Read for Metered<'_, T> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.io.read(buf)?;
        self.bytes_in.fetch_add(n as u64, Relaxed);
        Ok(n)
    }
}

impl<T: Transport> Write for Metered<'_, T> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.io.write(buf)?;
        self.bytes_out.fetch_add(n as u64, Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.io.flush()
    }
}

impl<T: Transport> Transport for Metered<'_, T> {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        self.io.set_read_timeout(timeout)
    }

    fn shutdown_write(&mut self) -> io::Result<()> {
        self.io.shutdown_write()
    }

    fn has_buffered_input(&self) -> bool {
        self.io.has_buffered_input()
    }

    fn read_within(&mut self, buf: &mut [u8], within: Duration) -> io::Result<Option<usize>> {
        let r = self.io.read_within(buf, within)?;
        self.bytes_in.fetch_add(r.unwrap_or(0) as u64, Relaxed);
        Ok(r)
    }

    fn send_file(&mut self, file: &mut File, offset: u64, len: u64) -> io::Result<()> {
        self.io.send_file(file, offset, len)?;
        self.bytes_out.fetch_add(len, Relaxed);
        Ok(())
    }
}
