//! Coarse deadlines for readiness waits that nearly always end early, such as a keep-alive
//! connection waiting in its fiber for the client's next request
//! ([`TcpStream::read_within`](crate::net::TcpStream::read_within)).
//!
//! The engine's per-socket read timeout arms a timer for every wait and cancels it when the
//! bytes come: a clock read, a lock, a map lookup, a reference count and an allocation, on
//! lists shared with the socket's event loop. On 8 workers that was 2.9% of a keep-alive
//! server's CPU (bench/results/2026-12-01-eight-workers-per-worker-pools.md). Here a wait
//! costs a store on the socket's own waiter:
//!
//! - a socket that waits this way gets one [`Waiter`] for its life: its waker and its deadline
//!   (milliseconds on a process clock; 0 while it is not waiting);
//! - arming stores the deadline; the first time, or after the sweeper dropped the waiter, it
//!   is also pushed on the calling worker's list ([`PerWorker`]);
//! - one sweeper thread looks at every listed waiter each [`TICK`]: it drops the ones not
//!   waiting and wakes the ones whose deadline passed (a wake is a hint: the fiber checks the
//!   clock itself). It sleeps while no waiter is listed.
//!
//! Trade-offs: a deadline is honoured up to one tick late (a 20 ms keep-alive wait ends after
//! 20 to 25 ms), and the sweeper's work grows with the sockets listed, not with the waits:
//! one look per listed waiter per tick.

use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Once, OnceLock, PoisonError};
use std::time::Duration;

use crate::engine::io::WaitIoWaker;
use crate::sync::PerWorker;

/// How often the sweeper looks: a coarse deadline ends at most this late.
pub const TICK: Duration = Duration::from_millis(5);

/// One socket's coarse deadline; see the module docs. Not padded to a cache line of its own:
/// an aligned allocation costs a parked connection hundreds of bytes (`ConnState` in
/// moria-http measured it), and the sweeper reads every listed waiter each tick anyway.
pub(crate) struct Waiter {
    /// Milliseconds on [`now_ms`]'s clock; 0 while not waiting.
    deadline: AtomicU64,
    /// Whether a list holds it.
    listed: AtomicBool,
    waker: WaitIoWaker,
}

impl std::fmt::Debug for Waiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waiter")
            .field("deadline", &self.deadline.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

struct Lists {
    shards: PerWorker<Mutex<Vec<Arc<Waiter>>>>,
    /// Set by the sweeper before it sleeps for want of waiters.
    sleeping: AtomicBool,
    gate: Mutex<()>,
    wake: Condvar,
}

static LISTS: OnceLock<Lists> = OnceLock::new();
static SWEEPER: Once = Once::new();

fn lists() -> &'static Lists {
    let lists = LISTS.get_or_init(|| Lists {
        shards: PerWorker::default(),
        sleeping: AtomicBool::new(false),
        gate: Mutex::new(()),
        wake: Condvar::new(),
    });
    SWEEPER.call_once(|| {
        std::thread::Builder::new()
            .name("moria-coarse-timer".into())
            .spawn(move || sweep(lists))
            .expect("cannot start the moria coarse-timer thread");
    });
    lists
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Milliseconds on the monotonic clock (`CLOCK_MONOTONIC`, the clock `Instant` reads), plus one
/// so that it never reads 0 ("not waiting"). Read directly and converted in 64-bit integers:
/// `Instant::elapsed` and `Duration::as_millis` (128-bit division) cost three times as much on
/// a path that runs once per keep-alive wait.
pub(crate) fn now_ms() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec for the call's duration.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    // CLOCK_MONOTONIC is always there on Linux; `Instant::now` makes the same call and the
    // same assumption.
    debug_assert_eq!(r, 0);
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let ms = u64::try_from(t.tv_nsec).unwrap_or(0) / 1_000_000;
    secs.saturating_mul(1000)
        .saturating_add(ms)
        .saturating_add(1)
}

/// The deadline `within` from now on [`now_ms`]'s clock (rounded up to whole milliseconds).
pub(crate) fn deadline_after(within: Duration) -> u64 {
    let ms = within
        .as_secs()
        .saturating_mul(1000)
        .saturating_add(u64::from(within.subsec_nanos().div_ceil(1_000_000)));
    // One more: the clock counts whole milliseconds, so the first may be nearly over.
    now_ms().saturating_add(ms).saturating_add(1)
}

impl Waiter {
    /// A waiter that wakes through `waker`.
    pub(crate) fn new(waker: WaitIoWaker) -> Arc<Waiter> {
        Arc::new(Waiter {
            deadline: AtomicU64::new(0),
            listed: AtomicBool::new(false),
            waker,
        })
    }

    /// Wakes the waiter's fiber once `at` ([`deadline_after`]) has passed, unless
    /// [`disarm`](Self::disarm)ed first.
    pub(crate) fn arm(self: &Arc<Self>, at: u64) {
        self.deadline.store(at, Ordering::Release);
        if self.listed.swap(true, Ordering::AcqRel) {
            return;
        }
        let lists = lists();
        lock(lists.shards.get()).push(Arc::clone(self));
        // Either the sweeper sees this waiter before it sleeps or this sees it sleeping.
        fence(Ordering::SeqCst);
        if lists.sleeping.load(Ordering::SeqCst) {
            let _gate = lock(&lists.gate);
            lists.sleeping.store(false, Ordering::SeqCst);
            lists.wake.notify_one();
        }
    }

    /// Not waiting any more.
    pub(crate) fn disarm(&self) {
        self.deadline.store(0, Ordering::Release);
    }

    /// Takes the waiter off its list; `true` when it was armed again meanwhile and must stay.
    fn unlist(&self) -> bool {
        self.listed.store(false, Ordering::Release);
        // An `arm` that saw `listed` still set pushed nothing: keep this entry for it.
        self.deadline.load(Ordering::Acquire) != 0 && !self.listed.swap(true, Ordering::AcqRel)
    }
}

/// The sweeper thread: every tick, drop the waiters not waiting and wake the ones due.
fn sweep(lists: &'static Lists) {
    let mut due: Vec<Arc<Waiter>> = Vec::new();
    loop {
        std::thread::sleep(TICK);
        let now = now_ms();
        let mut listed = 0;
        for shard in lists.shards.iter() {
            let mut waiters = lock(shard);
            waiters.retain(|w| {
                let at = w.deadline.load(Ordering::Acquire);
                if at == 0 {
                    return w.unlist();
                }
                if at <= now
                    && w.deadline
                        .compare_exchange(at, 0, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
                {
                    due.push(Arc::clone(w));
                    return w.unlist();
                }
                true
            });
            listed += waiters.len();
        }
        for w in due.drain(..) {
            w.waker.wakeup();
        }
        if listed == 0 {
            let mut gate = lock(&lists.gate);
            lists.sleeping.store(true, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if lists.shards.iter().any(|s| !lock(s).is_empty()) {
                lists.sleeping.store(false, Ordering::SeqCst);
                continue;
            }
            while lists.sleeping.load(Ordering::SeqCst) {
                gate = lists
                    .wake
                    .wait(gate)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{TcpListener, TcpStream};

    #[test]
    fn deadlines_round_up_to_whole_milliseconds_and_saturate() {
        let before = now_ms();
        assert!(before > 0, "0 means not waiting");
        // 1.5 ms is 2 whole ones, plus one for the millisecond already begun.
        let d = deadline_after(Duration::from_micros(1500));
        assert!(d >= before + 3, "{d} from {before}");
        assert!(d <= now_ms() + 3, "{d}");
        let t = now_ms();
        assert!(deadline_after(Duration::from_millis(7)) >= t + 8);
        assert_eq!(deadline_after(Duration::MAX), u64::MAX);
        assert!(now_ms() >= before);
    }

    #[test]
    fn a_wait_armed_while_the_sweeper_sleeps_wakes_it() {
        let mut listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        crate::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            let (_peer, _) = listener.accept().unwrap();
            let mut buf = [0u8; 8];
            // The first wait starts the sweeper; once it has timed out the lists are empty
            // and the sweeper goes to sleep.
            let first = s.read_within(&mut buf, Duration::from_millis(1)).unwrap();
            while !lists().sleeping.load(Ordering::SeqCst) {
                crate::yield_now();
            }
            let second = s.read_within(&mut buf, Duration::from_millis(5)).unwrap();
            done.send((first, second)).unwrap();
        });
        let got = finished
            .recv_timeout(Duration::from_secs(30))
            .expect("a wait armed while the sweeper slept was never woken");
        assert_eq!(got, (None, None));
    }
}
