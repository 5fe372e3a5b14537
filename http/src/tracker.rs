//! Live connections: the cap on how many are served at once, the per-connection state a graceful
//! shutdown needs (idle flags, descriptors), and the reclaiming of connections whose fiber died
//! without running its destructors (a stack overflow abandons the fiber's frames: its socket,
//! slot and registration would otherwise leak).

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use moria_runtime::fiber::JoinHandle;
use moria_runtime::sync::{Mutex, Semaphore, WaitGroup};

/// No request is being handled (reading a head, idle, or between requests).
const PHASE_BETWEEN: u8 = 0;
/// A handler runs and nothing of this connection is waiting to be sent: a bare 500 is still a
/// valid answer.
const PHASE_HANDLING_FRESH: u8 = 1;
/// A handler runs behind earlier answers not yet sent, or the response is being written.
const PHASE_STARTED: u8 = 2;

/// `chunk` (at most eight bytes) as a little-endian word, zero-padded, by two loads that
/// overlap where the chunk is shorter than twice their width (copying it into a padded array
/// called `memcpy`, ~20 instructions of every request; a byte loop cost as much).
#[inline(always)]
fn le_word(chunk: &[u8]) -> u64 {
    let n = chunk.len();
    if let Ok(w) = <[u8; 8]>::try_from(chunk) {
        return u64::from_le_bytes(w);
    }
    let u32_at = |i: usize| chunk[i..i + 4].try_into().map_or(0, u32::from_le_bytes);
    let u16_at = |i: usize| chunk[i..i + 2].try_into().map_or(0, u16::from_le_bytes);
    match n {
        4..=7 => u64::from(u32_at(0)) | u64::from(u32_at(n - 4)) << (8 * (n - 4)),
        2 | 3 => u64::from(u16_at(0)) | u64::from(u16_at(n - 2)) << (8 * (n - 2)),
        1 => u64::from(chunk[0]),
        _ => 0,
    }
}

/// The answer written on behalf of a connection whose fiber died before responding.
const DIED_RESPONSE: &[u8] =
    b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// What one connection is doing, shared between its fiber and the tracker.
#[derive(Default)]
pub(crate) struct ConnState {
    /// Set while the connection waits for a new request, so a shutdown can wake and close it.
    pub(crate) idle: AtomicBool,
    phase: AtomicU8,
    /// How many times the connection has parked: a fiber started before a park must not be
    /// recorded as serving the connection after it.
    epoch: AtomicU64,
    /// The first [`ROUTE_KEPT`] bytes of `METHOD target` of the request being handled, for the
    /// log line if its fiber dies, eight to a word; made text only when read.
    route: [AtomicU64; ROUTE_KEPT / 8],
    /// The whole route's length (more than [`ROUTE_KEPT`]: the kept bytes are cut).
    route_len: AtomicU32,
    /// The connection's socket, for a shutdown or a reclaim (here rather than in the tracker's
    /// entry, which has no room to spare: they fill this struct's padding).
    fd: RawFd,
    /// Whether the connection is TLS (a reclaim writes no plain 500 on it).
    tls: bool,
}

/// How much of a request's `METHOD target` a connection keeps for the reclaimer (longer ones are
/// cut, and marked so). Kept inline in words, without a lock: the copy each request makes
/// touches only the connection's own `ConnState`, with plain stores (a `Mutex<Vec<u8>>` took
/// two locked operations and wrote an allocation of its own, for the same memory in all). The
/// connection's own log lines print the whole route from the request.
const ROUTE_KEPT: usize = 64;

impl ConnState {
    /// A handler starts on `route` (`METHOD target`, as the request line has them: one copy);
    /// `fresh` when no earlier answer is still unsent.
    pub(crate) fn handling(&self, route: &[u8], fresh: bool) {
        let kept = &route[..route.len().min(ROUTE_KEPT)];
        for (word, chunk) in self.route.iter().zip(kept.chunks(8)) {
            word.store(le_word(chunk), Ordering::Relaxed);
        }
        self.route_len.store(
            u32::try_from(route.len()).unwrap_or(u32::MAX),
            Ordering::Relaxed,
        );
        // The phase is stored last, with release: whoever reads it (acquire) sees the route.
        let phase = if fresh {
            PHASE_HANDLING_FRESH
        } else {
            PHASE_STARTED
        };
        self.phase.store(phase, Ordering::Release);
    }

    /// The response has started (bytes may be on the wire or queued behind others).
    pub(crate) fn responding(&self) {
        self.phase.store(PHASE_STARTED, Ordering::Release);
    }

    /// The request is done.
    pub(crate) fn between(&self) {
        self.phase.store(PHASE_BETWEEN, Ordering::Release);
    }

    /// The route of the current request (its first [`ROUTE_KEPT`] bytes, then `…` if it was
    /// longer), or `-` between requests.
    pub(crate) fn route(&self) -> String {
        if self.phase.load(Ordering::Acquire) == PHASE_BETWEEN {
            return "-".to_string();
        }
        let len = self.route_len.load(Ordering::Relaxed) as usize;
        let mut bytes: Vec<u8> = self
            .route
            .iter()
            .flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes())
            .collect();
        bytes.truncate(len.min(ROUTE_KEPT));
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if len > ROUTE_KEPT {
            text.push('…');
        }
        text
    }
}

/// A live connection in the tracker's map. Small: the map keeps room for up to twice the
/// live connections (a hash table grows by doubling), so each byte here is up to two bytes
/// per idle connection.
struct Entry {
    state: Arc<ConnState>,
    /// The connection's fiber, once spawned: if it has finished while the entry is still
    /// here, its destructors never ran. Boxed: a parked connection has none, and the handle
    /// inline (32 bytes) made every entry twice the size (one allocation per fiber start
    /// instead: at accept and at each wake from the parking lot).
    fiber: Option<Box<JoinHandle<()>>>,
}

/// Every live connection of one server.
pub(crate) struct Tracker {
    entries: Mutex<HashMap<u64, Entry>>,
    next: AtomicU64,
    slots: Semaphore,
    live: WaitGroup,
    /// The runtime's stack overflow count when every overflow up to it was accounted for.
    overflows_seen: AtomicU64,
    /// Connections reclaimed since start (counted before the client can see the close).
    reclaimed: AtomicU64,
    /// WebSocket waits that went quiet since start.
    ws_quiet: AtomicU64,
}

/// A registered connection; dropping it deregisters (before the socket closes) and frees its slot.
pub(crate) struct Registration {
    tracker: Arc<Tracker>,
    id: u64,
    /// What the connection is doing.
    pub(crate) state: Arc<ConnState>,
}

/// A connection reclaimed from a fiber that died without running its destructors.
pub(crate) struct Reclaimed {
    /// `METHOD target` it was handling, or `-`.
    pub(crate) route: String,
    /// Whether a 500 was sent in its place.
    pub(crate) answered: bool,
    /// Why the fiber ended.
    pub(crate) cause: String,
}

impl Tracker {
    /// A tracker allowing `max` connections at once.
    pub(crate) fn new(max: usize) -> Tracker {
        Tracker {
            entries: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            slots: Semaphore::new(max),
            live: WaitGroup::new(),
            overflows_seen: AtomicU64::new(0),
            reclaimed: AtomicU64::new(0),
            ws_quiet: AtomicU64::new(0),
        }
    }

    /// Connections reclaimed from dead fibers since start.
    pub(crate) fn reclaimed(&self) -> u64 {
        self.reclaimed.load(Ordering::Relaxed)
    }

    /// WebSocket waits that went quiet since start (see [`Registration::went_quiet`]).
    pub(crate) fn ws_quiet(&self) -> u64 {
        self.ws_quiet.load(Ordering::Relaxed)
    }

    /// Takes a connection slot if one is free.
    pub(crate) fn try_acquire_slot(&self) -> bool {
        self.slots.try_acquire()
    }

    /// Registers an accepted connection that holds a slot.
    pub(crate) fn register(self: &Arc<Self>, fd: RawFd, tls: bool) -> Registration {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnState {
            fd,
            tls,
            ..ConnState::default()
        });
        self.live.add(1);
        self.entries.lock().insert(
            id,
            Entry {
                state: Arc::clone(&state),
                fiber: None,
            },
        );
        Registration {
            tracker: Arc::clone(self),
            id,
            state,
        }
    }

    /// Records the fiber serving registration `id`, started when the connection had parked
    /// `epoch` times (if it is still registered and has not parked again since: a fiber that
    /// finished by parking must not look like one that died).
    pub(crate) fn attach(&self, id: u64, fiber: JoinHandle<()>, epoch: u64) {
        if let Some(e) = self.entries.lock().get_mut(&id) {
            if e.state.epoch.load(Ordering::Acquire) == epoch {
                e.fiber = Some(Box::new(fiber));
            }
        }
    }

    /// Live connections.
    pub(crate) fn live(&self) -> usize {
        self.live.pending()
    }

    /// Wakes every idle connection (its pending read ends) so it can close.
    pub(crate) fn wake_idle(&self) {
        for e in self.entries.lock().values() {
            if e.state.idle.load(Ordering::SeqCst) {
                shutdown_fd(e.state.fd, libc::SHUT_RD);
            }
        }
    }

    /// Ends every connection's I/O at once (the grace period is over).
    pub(crate) fn abort_all(&self) {
        for e in self.entries.lock().values() {
            shutdown_fd(e.state.fd, libc::SHUT_RDWR);
        }
    }

    /// Waits up to `d` for every connection to finish; returns whether they all did.
    pub(crate) fn wait_empty(&self, d: Duration) -> bool {
        self.live.wait_timeout(d)
    }

    /// Whether a fiber may have died without deregistering since the last look: only a stack
    /// overflow does that, and the runtime counts them.
    pub(crate) fn may_have_abandoned(&self) -> bool {
        moria_runtime::stack_overflows() != self.overflows_seen.load(Ordering::Acquire)
    }

    /// Reclaims every connection whose fiber finished without deregistering: frees its slot,
    /// answers 500 where its response had not started (plain HTTP), closes its socket. Does
    /// nothing unless [`may_have_abandoned`](Self::may_have_abandoned).
    pub(crate) fn reclaim_abandoned(&self) -> Vec<Reclaimed> {
        let seen = self.overflows_seen.load(Ordering::Acquire);
        let now = moria_runtime::stack_overflows();
        if now == seen {
            return Vec::new();
        }
        let dead: Vec<Entry> = {
            let mut entries = self.entries.lock();
            let ids: Vec<u64> = entries
                .iter()
                .filter(|(_, e)| e.fiber.as_ref().is_some_and(|f| f.is_finished()))
                .map(|(id, _)| *id)
                .collect();
            ids.iter().filter_map(|id| entries.remove(id)).collect()
        };
        // Until as many dead connections turn up as there were overflows (some may have been
        // in other fibers, or not finished yet), later looks scan again.
        if dead.len() as u64 >= now - seen {
            self.overflows_seen.store(now, Ordering::Release);
        }
        dead.into_iter().map(|e| self.reclaim(e)).collect()
    }

    fn reclaim(&self, mut e: Entry) -> Reclaimed {
        let cause = match e.fiber.take().map(|f| f.join()) {
            Some(Err(err)) if err.is_stack_overflow() => "stack overflow".to_string(),
            Some(Err(err)) => err.message().to_string(),
            _ => "ended without deregistering".to_string(),
        };
        // Counted, and the slot free, before the client can see the close: it may look at the
        // stats or connect again at once.
        self.reclaimed.fetch_add(1, Ordering::Relaxed);
        self.live.done();
        self.slots.release();
        let fresh = e.state.phase.load(Ordering::Acquire) == PHASE_HANDLING_FRESH;
        let fd = e.state.fd;
        let answered = fresh && !e.state.tls && write_all_now(fd, DIED_RESPONSE);
        let route = e.state.route();
        shutdown_fd(fd, libc::SHUT_RDWR);
        // SAFETY: the descriptor belonged to the dead fiber's socket, whose destructor never
        // ran and never will (its frames were abandoned); the entry was the last record of it
        // and has been removed, so it is closed exactly once, here.
        unsafe {
            libc::close(fd);
        }
        Reclaimed {
            route,
            answered,
            cause,
        }
    }
}

/// Writes `bytes` without waiting (a fresh socket buffer takes a short answer whole).
fn write_all_now(fd: RawFd, bytes: &[u8]) -> bool {
    // SAFETY: `fd` is an open socket (see `reclaim`); the buffer is valid for its length.
    let n = unsafe {
        libc::send(
            fd,
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
    n == bytes.len() as isize
}

fn shutdown_fd(fd: RawFd, how: libc::c_int) {
    // SAFETY: `fd` belongs to a registered connection; a connection deregisters (under the
    // same lock held by our caller) before its socket is closed, so the descriptor is open.
    unsafe {
        libc::shutdown(fd, how);
    }
}

impl Registration {
    /// The registration's id (for [`Tracker::attach`]).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// How many times the connection has parked (for [`Tracker::attach`]).
    pub(crate) fn epoch(&self) -> u64 {
        self.state.epoch.load(Ordering::Acquire)
    }

    /// What records a fiber started now (the connection parked) as serving it: call it with
    /// the fiber's handle once spawned ([`Tracker::attach`]).
    pub(crate) fn attacher(&self) -> impl FnOnce(JoinHandle<()>) + Send + 'static {
        let (tracker, id, epoch) = (Arc::clone(&self.tracker), self.id, self.epoch());
        move |fiber| tracker.attach(id, fiber, epoch)
    }

    /// The connection (a WebSocket) went quiet: it waits with its buffers given back.
    pub(crate) fn went_quiet(&self) {
        self.tracker.ws_quiet.fetch_add(1, Ordering::Relaxed);
    }

    /// The connection is about to park: its fiber will finish without it ending, so that
    /// fiber stops being recorded as serving it.
    pub(crate) fn detach(&self) {
        if let Some(e) = self.tracker.entries.lock().get_mut(&self.id) {
            e.fiber = None;
            e.state.epoch.fetch_add(1, Ordering::AcqRel);
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.tracker.entries.lock().remove(&self.id);
        self.tracker.live.done();
        self.tracker.slots.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn le_word_is_the_zero_padded_chunk() {
        let bytes = *b"\x01\x82\x03\xf4\x05\x06\x87\x08";
        for n in 0..=8 {
            let mut padded = [0u8; 8];
            padded[..n].copy_from_slice(&bytes[..n]);
            assert_eq!(
                le_word(&bytes[..n]),
                u64::from_le_bytes(padded),
                "{n} bytes"
            );
        }
    }

    #[test]
    fn the_route_is_kept_whole_up_to_its_limit_then_cut_and_marked() {
        let state = ConnState::default();
        assert_eq!(state.route(), "-");
        state.handling(b"GET /a?b=c", true);
        assert_eq!(state.route(), "GET /a?b=c");
        let exact = format!("GET /{}", "x".repeat(ROUTE_KEPT - 5));
        state.handling(exact.as_bytes(), false);
        assert_eq!(state.route(), exact);
        // A shorter route after a longer one shows none of the longer one's bytes.
        state.handling(b"PUT /", false);
        assert_eq!(state.route(), "PUT /");
        let long = format!("POST /{}", "y".repeat(200));
        state.handling(long.as_bytes(), false);
        assert_eq!(state.route(), format!("{}…", &long[..ROUTE_KEPT]));
        state.between();
        assert_eq!(state.route(), "-");
    }
}
