//! [`pipe`]: a bounded in-memory pipe between fibers (or threads), on moria-runtime's sync.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::Duration;

use moria_runtime::sync::{Condvar, Mutex};
use moria_runtime::Deadline;

use crate::timeout::{SetReadTimeout, SetWriteTimeout};
use crate::{Duplex, Error};

/// Default buffer of a pipe, in bytes.
pub const DEFAULT_PIPE_CAPACITY: usize = 64 * 1024;

/// What both ends share.
#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    readable: Condvar,
    writable: Condvar,
}

#[derive(Debug)]
struct State {
    buf: VecDeque<u8>,
    capacity: usize,
    reader_open: bool,
    writer_open: bool,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
}

/// A pipe with a [`DEFAULT_PIPE_CAPACITY`] buffer: what the writer writes, the reader reads.
///
/// The writer waits while the buffer is full, the reader while it is empty; the waits park the
/// fiber (or block the thread), so the ends may live on different workers or plain threads.
/// Dropping the writer gives the reader EOF once the buffer is drained; dropping the reader makes
/// writes fail with `BrokenPipe`.
pub fn pipe() -> (PipeWriter, PipeReader) {
    pipe_with_capacity(DEFAULT_PIPE_CAPACITY)
}

/// A pipe with a buffer of `capacity` bytes (at least 1).
pub fn pipe_with_capacity(capacity: usize) -> (PipeWriter, PipeReader) {
    let capacity = capacity.max(1);
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            buf: VecDeque::with_capacity(capacity),
            capacity,
            reader_open: true,
            writer_open: true,
            read_timeout: None,
            write_timeout: None,
        }),
        readable: Condvar::new(),
        writable: Condvar::new(),
    });
    (
        PipeWriter {
            shared: shared.clone(),
        },
        PipeReader { shared },
    )
}

/// Two pipes crossed: a connected pair of duplex streams, like a socket pair in memory
/// (Mordor's `pipeStream`).
pub fn duplex_pipe() -> (
    Duplex<PipeReader, PipeWriter>,
    Duplex<PipeReader, PipeWriter>,
) {
    let (a_writer, b_reader) = pipe();
    let (b_writer, a_reader) = pipe();
    (
        Duplex::new(a_reader, a_writer),
        Duplex::new(b_reader, b_writer),
    )
}

/// The reading end of a [`pipe`].
#[derive(Debug)]
pub struct PipeReader {
    shared: Arc<Shared>,
}

/// The writing end of a [`pipe`].
#[derive(Debug)]
pub struct PipeWriter {
    shared: Arc<Shared>,
}

/// Waits on `cond` while `blocked` holds, within the optional timeout.
fn wait(
    cond: &Condvar,
    guard: &mut moria_runtime::sync::MutexGuard<'_, State>,
    timeout: Option<Duration>,
    what: &'static str,
    blocked: impl FnMut(&mut State) -> bool,
) -> io::Result<()> {
    match timeout {
        None => {
            cond.wait_while(guard, blocked);
            Ok(())
        }
        Some(t) => {
            if cond.wait_while_until(guard, Deadline::after(t), blocked) {
                Err(Error::TimedOut(what).into())
            } else {
                Ok(())
            }
        }
    }
}

impl Read for PipeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let shared = &*self.shared;
        let mut state = shared.state.lock();
        let timeout = state.read_timeout;
        wait(&shared.readable, &mut state, timeout, "pipe read", |s| {
            s.buf.is_empty() && s.writer_open
        })?;
        let n = buf.len().min(state.buf.len());
        let (front, back) = state.buf.as_slices();
        let from_front = n.min(front.len());
        buf[..from_front].copy_from_slice(&front[..from_front]);
        buf[from_front..n].copy_from_slice(&back[..n - from_front]);
        state.buf.drain(..n);
        drop(state);
        if n > 0 {
            shared.writable.notify_one();
        }
        Ok(n)
    }
}

impl Write for PipeWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let shared = &*self.shared;
        let mut state = shared.state.lock();
        let timeout = state.write_timeout;
        wait(&shared.writable, &mut state, timeout, "pipe write", |s| {
            s.buf.len() == s.capacity && s.reader_open
        })?;
        if !state.reader_open {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "pipe reader dropped",
            ));
        }
        let n = buf.len().min(state.capacity - state.buf.len());
        state.buf.extend(&buf[..n]);
        drop(state);
        shared.readable.notify_one();
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl SetReadTimeout for PipeReader {
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.shared.state.lock().read_timeout = timeout;
        Ok(())
    }
}

impl SetWriteTimeout for PipeWriter {
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.shared.state.lock().write_timeout = timeout;
        Ok(())
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        let mut state = self.shared.state.lock();
        state.reader_open = false;
        state.buf.clear();
        drop(state);
        self.shared.writable.notify_all();
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        self.shared.state.lock().writer_open = false;
        self.shared.readable.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_pass_and_writer_drop_is_eof() {
        let (mut w, mut r) = pipe();
        w.write_all(b"hello").unwrap();
        drop(w);
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"hello");
    }

    #[test]
    fn reader_drop_is_broken_pipe() {
        let (mut w, r) = pipe();
        drop(r);
        assert_eq!(w.write(b"x").unwrap_err().kind(), io::ErrorKind::BrokenPipe);
    }

    #[test]
    fn writes_stop_at_capacity() {
        let (mut w, mut r) = pipe_with_capacity(4);
        assert_eq!(w.write(b"abcdef").unwrap(), 4);
        let mut buf = [0u8; 3];
        assert_eq!(r.read(&mut buf).unwrap(), 3);
        assert_eq!(w.write(b"ef").unwrap(), 2);
        let mut out = Vec::new();
        drop(w);
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"def");
    }

    #[test]
    fn zero_length_calls_do_not_wait() {
        let (mut w, mut r) = pipe_with_capacity(1);
        assert_eq!(r.read(&mut []).unwrap(), 0);
        w.write_all(b"x").unwrap();
        assert_eq!(w.write(b"").unwrap(), 0);
    }

    #[test]
    fn timeouts_expire_as_timed_out() {
        let (mut w, mut r) = pipe_with_capacity(1);
        r.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let err = r.read(&mut [0; 1]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        w.set_write_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        w.write_all(b"x").unwrap();
        let err = w.write(b"y").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }

    #[test]
    fn duplex_pipe_talks_both_ways() {
        let (mut a, mut b) = duplex_pipe();
        a.write_all(b"ping").unwrap();
        let mut buf = [0u8; 4];
        b.read_exact(&mut buf).unwrap();
        b.write_all(b"pong").unwrap();
        a.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"pong");
    }
}
