//! A connection's working state while it is served: the read buffer (heads and the bytes after
//! them), the write buffer (answers batched for one write), the parsed head, and the I/O around
//! them: making room for a head, flushing, timeouts, lingering before a close. What the layer
//! above keeps per working state (its response, its scratch) rides along as `app`.

use std::io;
use std::time::{Duration, Instant};

use moria_runtime::ShutdownToken;
use std::sync::atomic::{fence, Ordering};

use super::date::DateCache;
use crate::h1::decode::{Head, HeadScan};
use crate::h1::encode::HeadEncoder;
use crate::tracker::ConnState;
use crate::transport::Transport;

/// Initial read buffer (grows up to the head limit when a head needs it; nginx starts at 1 KiB).
pub(crate) const INIT_READ_BUF: usize = 4 * 1024;
/// Room kept after a head for reading its body.
pub(crate) const MIN_BODY_ROOM: usize = 4 * 1024;
/// Initial write buffer (grows with the answers batched in it).
pub(crate) const INIT_WRITE_BUF: usize = 4 * 1024;
/// Batched responses are flushed once this many bytes are pending.
pub(crate) const WRITE_FLUSH_AT: usize = 64 * 1024;
/// Before closing on an error, read and discard what the client still sends for at most this
/// long, so the error response is not lost to a TCP reset.
const LINGER_TIME: Duration = Duration::from_secs(2);
/// ... or at most this many bytes.
const LINGER_BYTES: usize = 256 * 1024;

/// What the layer above keeps with each pooled working state.
pub(crate) trait Scratch: Default + Send {
    /// Forgets the last request; keeps allocations of the usual size.
    fn clear(&mut self);
}

/// The working state of a connection while it is served (pooled between runs).
pub(crate) struct Conn<S> {
    pub(crate) rbuf: Vec<u8>,
    pub(crate) start: usize,
    pub(crate) filled: usize,
    pub(crate) wbuf: Vec<u8>,
    pub(crate) head: Head,
    pub(crate) scan: HeadScan,
    pub(crate) date: DateCache,
    /// The response heads' pre-rendered common lines.
    pub(crate) encoder: HeadEncoder,
    pub(crate) read_timeout: Option<Duration>,
    /// Requests answered on the connection being served (its `ConnMemory` keeps it between
    /// runs).
    pub(crate) answered: u32,
    pub(crate) head_deadline: Option<Instant>,
    /// The clock (seconds) for the `Date` of this batch of answers.
    pub(crate) now: u64,
    /// The dispatcher's part of the working state.
    pub(crate) app: S,
}

impl<S: Scratch> Conn<S> {
    pub(crate) fn new() -> Conn<S> {
        Conn {
            rbuf: vec![0; INIT_READ_BUF],
            start: 0,
            filled: 0,
            wbuf: Vec::with_capacity(INIT_WRITE_BUF),
            head: Head::default(),
            scan: HeadScan::default(),
            date: DateCache::default(),
            encoder: HeadEncoder::default(),
            read_timeout: None,
            answered: 0,
            head_deadline: None,
            now: 0,
            app: S::default(),
        }
    }
}

impl<S> Conn<S> {
    /// Moves a partial head to the front and grows the buffer so a head of `max_head` fits.
    pub(crate) fn make_room(&mut self, max_head: usize) {
        if self.start > 0 && self.rbuf.len() - self.filled < MIN_BODY_ROOM {
            self.rbuf.copy_within(self.start..self.filled, 0);
            self.filled -= self.start;
            self.start = 0;
        }
        if self.filled == self.rbuf.len() {
            let want = (self.rbuf.len() * 2)
                .min(max_head + MIN_BODY_ROOM)
                .max(self.filled + 1);
            self.rbuf.resize(want, 0);
        }
    }

    /// Sets the socket's read timeout, unless it is set to `d` already.
    pub(crate) fn set_read_timeout<T: Transport>(
        &mut self,
        io: &mut T,
        d: Duration,
    ) -> io::Result<()> {
        if self.read_timeout != Some(d) {
            io.set_read_timeout(Some(d))?;
            self.read_timeout = Some(d);
        }
        Ok(())
    }

    /// Writes the batched answers.
    pub(crate) fn flush<T: Transport>(&mut self, io: &mut T) -> io::Result<()> {
        if !self.wbuf.is_empty() {
            io.write_all(&self.wbuf)?;
            self.wbuf.clear();
        }
        Ok(())
    }

    /// Half-closes, then discards what the client still sends (bounded in time and bytes).
    /// The connection counts as idle meanwhile, so a shutdown ends the wait at once.
    pub(crate) fn linger<T: Transport>(
        &mut self,
        io: &mut T,
        state: &ConnState,
        token: &ShutdownToken,
    ) {
        if io.shutdown_write().is_err() {
            return;
        }
        state.idle.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if token.is_triggered() {
            return;
        }
        let deadline = Instant::now() + LINGER_TIME;
        let mut seen = 0;
        while seen < LINGER_BYTES {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || io.set_read_timeout(Some(left)).is_err() {
                return;
            }
            match io.read(&mut self.rbuf) {
                Ok(0) | Err(_) => return,
                Ok(n) => seen += n,
            }
        }
    }

    /// `METHOD target` of the request whose head is `rbuf[a..b]` (parsed into `self.head`), for
    /// log lines: whole, where the connection's `ConnState` keeps only its start.
    pub(crate) fn route(&self, a: usize, b: usize) -> String {
        String::from_utf8_lossy(&self.rbuf[a..b][self.head.route()]).into_owned()
    }
}
