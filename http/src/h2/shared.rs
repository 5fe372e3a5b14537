//! What a connection's reading fiber and its stream fibers share: the flow-control state and
//! each stream's inbox under one lock, with a condition variable for every change (a window
//! opened, body data arrived, a stream reset, the connection gone), and the writing half of the
//! socket under another, with the frames queued for it. A stream fiber queues its response's
//! frames, lets the other ready fibers run once, then writes whatever is queued: the responses
//! of the streams that ran meanwhile go out in one write (and one TLS record) instead of one
//! each. Frames are queued whole, so they never interleave.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use moria_runtime::fiber::yield_now;
use moria_runtime::sync::{Condvar, Mutex, MutexGuard};

use super::settings::{PeerSettings, CONN_WINDOW, DEFAULT_WINDOW};

/// One open stream as both sides of the connection see it.
#[derive(Debug)]
pub(crate) struct Slot {
    /// What the server may still send on it.
    pub send_window: i64,
    /// What the client may still send on it.
    pub recv_window: i64,
    /// Body bytes received and not yet read.
    pub inbox: VecDeque<Vec<u8>>,
    /// Bytes in `inbox`.
    pub buffered: usize,
    /// The client ended its side (END_STREAM).
    pub recv_end: bool,
    /// The stream was reset (by either side): its fiber stops sending.
    pub reset: bool,
    /// The declared content-length, and the body bytes received so far.
    pub declared: Option<u64>,
    /// Body bytes received so far.
    pub received: u64,
}

impl Slot {
    /// A stream opened with the windows the settings give.
    pub(crate) fn new(send_window: i64, recv_window: i64, declared: Option<u64>) -> Slot {
        Slot {
            send_window,
            recv_window,
            inbox: VecDeque::new(),
            buffered: 0,
            recv_end: false,
            reset: false,
            declared,
            received: 0,
        }
    }
}

/// The connection's flow-control and stream state.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// The peer's settings.
    pub peer: PeerSettings,
    /// What the server may still send on the connection.
    pub send_window: i64,
    /// What the client may still send on the connection.
    pub recv_window: i64,
    /// Streams whose fiber has not finished.
    pub streams: HashMap<u32, Slot>,
    /// The reading side ended: nothing more arrives, nothing more may be sent.
    pub dead: bool,
    /// A shutdown began and the GOAWAY went out.
    pub draining: bool,
    /// Streams reset because the client held a window shut (past the parked cap, or past
    /// the stall timeout): past [`MAX_STALLED`] the connection ends (ENHANCE_YOUR_CALM).
    pub stalled: u32,
}

/// Streams of one connection reset for a window held shut before the connection ends with
/// GOAWAY(ENHANCE_YOUR_CALM): a client that keeps opening streams it never lets us answer
/// must reconnect (and the parked cap is shared by every connection).
pub(crate) const MAX_STALLED: u32 = 32;

/// Queued bytes past which a queueing sender writes them at once.
const FLUSH_AT: usize = 32 * 1024;
/// The largest queue buffer kept between writes.
const KEEP_CAPACITY: usize = 64 * 1024;

/// Frames go out through here, queued whole and written by whoever flushes.
struct Out {
    io: Box<dyn Write + Send>,
    queued: Vec<u8>,
    /// A write failed: what is queued afterwards is refused.
    broken: bool,
}

impl Out {
    /// Writes what is queued.
    fn flush(&mut self) -> io::Result<()> {
        if self.broken {
            return Err(broken());
        }
        if self.queued.is_empty() {
            return Ok(());
        }
        let r = self
            .io
            .write_all(&self.queued)
            .and_then(|()| self.io.flush());
        self.queued.clear();
        if self.queued.capacity() > KEEP_CAPACITY {
            self.queued = Vec::new();
        }
        self.broken = r.is_err();
        r
    }
}

/// The error of a sender after a write failed.
fn broken() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "HTTP/2 connection write failed")
}

/// One connection's shared part.
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Notified on every change of `state` a stream fiber may wait for.
    pub changed: Condvar,
    out: Mutex<Out>,
    /// How long a stream waits for the client (window, body) before giving up.
    pub stall: Duration,
    /// The server's count of streams parked on a zero window.
    pub parked: Arc<Parked>,
    /// The connection's socket, whose sides are shut to stop the reading fiber or the writes.
    fd: RawFd,
}

/// A server's streams waiting on a send window at 0 (their own or their connection's),
/// counted across its connections and capped: each holds a fiber (its stack) until the client
/// opens the window or the stall timeout, so clients may make the server hold at most `max`
/// of them, however many connections they open.
#[derive(Debug)]
pub(crate) struct Parked {
    count: AtomicUsize,
    max: usize,
}

impl Parked {
    /// A count capped at `max`.
    pub(crate) fn new(max: usize) -> Parked {
        Parked {
            count: AtomicUsize::new(0),
            max,
        }
    }

    /// Counts one more parked stream, unless `max` are parked already.
    pub(crate) fn enter(&self) -> bool {
        self.count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .is_ok()
    }

    /// Counts one parked stream less.
    pub(crate) fn leave(&self) {
        self.count.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Shared {
    /// The shared part of a connection on socket `fd` writing to `io`.
    pub(crate) fn new(
        io: Box<dyn Write + Send>,
        fd: RawFd,
        stall: Duration,
        parked: Arc<Parked>,
    ) -> Shared {
        Shared {
            state: Mutex::new(State {
                send_window: DEFAULT_WINDOW,
                recv_window: CONN_WINDOW,
                ..State::default()
            }),
            changed: Condvar::new(),
            out: Mutex::new(Out {
                io,
                queued: Vec::new(),
                broken: false,
            }),
            stall,
            parked,
            fd,
        }
    }

    /// Locks the state.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Ends sending on the socket between two frames (the writer's lock held): what is sent
    /// afterwards fails.
    pub(crate) fn shut_write(&self) {
        let mut between_frames = self.out.lock();
        let _ = between_frames.flush();
        self.shutdown(libc::SHUT_WR);
    }

    /// Shuts the reading side of the socket, so the reading fiber's wait ends (its next read
    /// sees the end of input).
    pub(crate) fn shut_read(&self) {
        self.shutdown(libc::SHUT_RD);
    }

    fn shutdown(&self, how: libc::c_int) {
        // SAFETY: `fd` is the connection's socket, open while its `Shared` lives (`serve`
        // returns, and the socket closes, only after every stream fiber has finished).
        unsafe {
            libc::shutdown(self.fd, how);
        }
    }

    /// Counts a stream reset for a window held shut; past [`MAX_STALLED`] of them, stops the
    /// reading fiber, which ends the connection with GOAWAY(ENHANCE_YOUR_CALM).
    pub(crate) fn stalled(&self) {
        let mut st = self.state();
        st.stalled += 1;
        if st.stalled == MAX_STALLED + 1 {
            drop(st);
            log::debug!("HTTP/2: {MAX_STALLED} streams stalled by the client; closing");
            self.shut_read();
        }
    }

    /// Whether the client stalled too many streams (see [`MAX_STALLED`]).
    pub(crate) fn too_stalled(&self) -> bool {
        self.state().stalled > MAX_STALLED
    }

    /// Writes the frames `f` builds now, after those queued before them.
    pub(crate) fn send(&self, f: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        self.frames(true, f)
    }

    /// Queues the frames `f` builds (written at once past [`FLUSH_AT`] queued bytes): the
    /// caller flushes before it waits for anything.
    pub(crate) fn queue(&self, f: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        self.frames(false, f)
    }

    /// Queues the frames `f` builds (a response's head is encoded straight into the queue),
    /// and writes what is queued if `now` or past [`FLUSH_AT`] bytes.
    pub(crate) fn frames(&self, now: bool, f: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let mut out = self.out.lock();
        if out.broken {
            return Err(broken());
        }
        f(&mut out.queued);
        if now || out.queued.len() >= FLUSH_AT {
            return out.flush();
        }
        Ok(())
    }

    /// Writes what is queued now.
    pub(crate) fn flush(&self) -> io::Result<()> {
        self.out.lock().flush()
    }

    /// Lets the other ready fibers run (and queue their frames), then writes what is queued,
    /// unless one of them already did.
    pub(crate) fn flush_soon(&self) -> io::Result<()> {
        yield_now();
        self.flush()
    }
}

/// The error a stream's fiber gets once its stream or the connection is gone.
pub(crate) fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionReset, "HTTP/2 stream reset")
}
