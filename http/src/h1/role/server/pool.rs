//! The pool of connection working states: a connection takes one when it has bytes to serve
//! and gives it back when it parks or ends, so buffers follow the busy connections, not the
//! open ones. At most [`POOL_MAX`] wait here; the rest are freed.

use std::sync::{Mutex, PoisonError};

use super::{Conn, INIT_READ_BUF, WRITE_FLUSH_AT};

/// Working states kept for reuse (a server rarely serves more than a few per worker at once:
/// a connection gives its state back as soon as its answers are out).
pub(crate) const POOL_MAX: usize = 64;

/// A server's spare working states. A plain lock: held for a push or a pop, never across a
/// wait.
#[derive(Default)]
pub(crate) struct ConnPool {
    // Connections hold their state as a `Box<Conn>`: keeping the boxes lets `take` and `put`
    // move a pointer, never copy the state or allocate.
    #[allow(clippy::vec_box)]
    free: Mutex<Vec<Box<Conn>>>,
}

impl ConnPool {
    /// A working state with empty buffers.
    pub(crate) fn take(&self) -> Box<Conn> {
        let spare = self
            .free
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        spare.unwrap_or_else(|| Box::new(Conn::new()))
    }

    /// Gives a working state back: what it still holds for a request (a response body, a
    /// file) is dropped and buffers grown past their usual size shrink back.
    pub(crate) fn put(&self, mut conn: Box<Conn>) {
        conn.clear();
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        if free.len() < POOL_MAX {
            free.push(conn);
        }
    }

    /// Working states waiting in the pool.
    pub(crate) fn pooled(&self) -> usize {
        self.free
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Conn {
    /// Forgets the last connection's bytes and request; keeps buffers of the usual size.
    fn clear(&mut self) {
        self.start = 0;
        self.filled = 0;
        if self.rbuf.len() > INIT_READ_BUF {
            self.rbuf.truncate(INIT_READ_BUF);
            self.rbuf.shrink_to_fit();
        }
        self.wbuf.clear();
        if self.wbuf.capacity() > WRITE_FLUSH_AT {
            self.wbuf.shrink_to(super::INIT_WRITE_BUF);
        }
        self.scratch.clear();
        if self.scratch.capacity() > WRITE_FLUSH_AT {
            self.scratch = Vec::new();
        }
        self.scan.reset();
        self.res.reset();
        self.res.trim(WRITE_FLUSH_AT);
        self.params.clear();
        self.path_buf.clear();
        self.read_timeout = None;
        self.answered = 0;
        self.head_deadline = None;
    }
}
