//! What a connection's reading fiber and its stream fibers share: the flow-control state and
//! each stream's inbox under one lock, with a condition variable for every change (a window
//! opened, body data arrived, a stream reset, the connection gone), and the writing half of the
//! socket under another, where whole frames are written one sender at a time.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};
use std::time::Duration;

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
}

/// Frames go out through here, one sender at a time.
pub(crate) struct Out {
    io: Box<dyn Write + Send>,
    buf: Vec<u8>,
}

impl Out {
    /// Builds frames with `f` and writes them at once.
    pub(crate) fn send(&mut self, f: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        self.buf.clear();
        f(&mut self.buf);
        let r = self.io.write_all(&self.buf).and_then(|()| self.io.flush());
        if self.buf.capacity() > 64 * 1024 {
            self.buf = Vec::new();
        }
        r
    }
}

/// One connection's shared part.
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Notified on every change of `state` a stream fiber may wait for.
    pub changed: Condvar,
    out: Mutex<Out>,
    /// How long a stream waits for the client (window, body) before giving up.
    pub stall: Duration,
}

impl Shared {
    /// The shared part of a connection writing to `io`.
    pub(crate) fn new(io: Box<dyn Write + Send>, stall: Duration) -> Shared {
        Shared {
            state: Mutex::new(State {
                send_window: DEFAULT_WINDOW,
                recv_window: CONN_WINDOW,
                ..State::default()
            }),
            changed: Condvar::new(),
            out: Mutex::new(Out {
                io,
                buf: Vec::new(),
            }),
            stall,
        }
    }

    /// Locks the state.
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// Ends sending on socket `fd` between two frames (the writer's lock held): what is sent
    /// afterwards fails.
    pub(crate) fn shut_write(&self, fd: std::os::fd::RawFd) {
        let _between_frames = self.out.lock();
        // SAFETY: `fd` is the connection's socket, open while its `Shared` lives.
        unsafe {
            libc::shutdown(fd, libc::SHUT_WR);
        }
    }

    /// Writes the frames `f` builds.
    pub(crate) fn send(&self, f: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        self.out.lock().send(f)
    }
}

/// The error a stream's fiber gets once its stream or the connection is gone.
pub(crate) fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionReset, "HTTP/2 stream reset")
}
