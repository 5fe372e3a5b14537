//! Live connections: the cap that pauses accepting, the idle flags and descriptors a graceful
//! shutdown needs to wake idle keep-alive connections, and the count it waits on.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use moria_runtime::sync::{Mutex, Semaphore, WaitGroup};

struct Entry {
    fd: RawFd,
    idle: Arc<AtomicBool>,
}

/// Every live connection of one server.
pub(crate) struct Tracker {
    entries: Mutex<HashMap<u64, Entry>>,
    next: AtomicU64,
    slots: Semaphore,
    live: WaitGroup,
}

/// A registered connection; dropping it deregisters (before the socket closes) and frees its slot.
pub(crate) struct Registration {
    tracker: Arc<Tracker>,
    id: u64,
    /// Set while the connection waits for a new request.
    pub(crate) idle: Arc<AtomicBool>,
}

impl Tracker {
    /// A tracker allowing `max` connections at once.
    pub(crate) fn new(max: usize) -> Tracker {
        Tracker {
            entries: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            slots: Semaphore::new(max),
            live: WaitGroup::new(),
        }
    }

    /// Waits for a free connection slot (this is where accepting pauses at the cap).
    pub(crate) fn acquire_slot(&self) {
        self.slots.acquire();
    }

    /// Gives back a slot taken by [`acquire_slot`](Self::acquire_slot) that was not used.
    pub(crate) fn release_slot(&self) {
        self.slots.release();
    }

    /// Registers an accepted connection that holds a slot.
    pub(crate) fn register(self: &Arc<Self>, fd: RawFd) -> Registration {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let idle = Arc::new(AtomicBool::new(false));
        self.live.add(1);
        self.entries.lock().insert(
            id,
            Entry {
                fd,
                idle: Arc::clone(&idle),
            },
        );
        Registration {
            tracker: Arc::clone(self),
            id,
            idle,
        }
    }

    /// Live connections.
    pub(crate) fn live(&self) -> usize {
        self.live.pending()
    }

    /// Wakes every idle connection (its pending read ends) so it can close.
    pub(crate) fn wake_idle(&self) {
        for e in self.entries.lock().values() {
            if e.idle.load(Ordering::SeqCst) {
                shutdown_fd(e.fd, libc::SHUT_RD);
            }
        }
    }

    /// Ends every connection's I/O at once (the grace period is over).
    pub(crate) fn abort_all(&self) {
        for e in self.entries.lock().values() {
            shutdown_fd(e.fd, libc::SHUT_RDWR);
        }
    }

    /// Waits up to `d` for every connection to finish; returns whether they all did.
    pub(crate) fn wait_empty(&self, d: Duration) -> bool {
        self.live.wait_timeout(d)
    }
}

fn shutdown_fd(fd: RawFd, how: libc::c_int) {
    // SAFETY: `fd` belongs to a registered connection; a connection deregisters (under the
    // same lock held by our caller) before its socket is closed, so the descriptor is open.
    unsafe {
        libc::shutdown(fd, how);
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.tracker.entries.lock().remove(&self.id);
        self.tracker.live.done();
        self.tracker.slots.release();
    }
}
