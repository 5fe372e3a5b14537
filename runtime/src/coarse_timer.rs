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
//! - one sweeper thread sleeps until the earliest deadline it knows of (and at least one [`TICK`]
//!   after its last look, so that waiters falling due together are woken together). Then it
//!   looks at every listed waiter: it drops the ones not waiting, wakes the ones whose deadline
//!   passed (a wake is a hint: the fiber checks the clock itself) and takes the earliest
//!   deadline of the rest as its next look. With nothing armed it sleeps until a wait arms;
//! - arming a deadline more than a tick before the sweeper's next look moves the look earlier
//!   and wakes the sweeper; a later one (the usual case: waits of one length, armed one after
//!   another) costs nothing more than the store.
//!
//! Trade-offs: a deadline is honoured up to one tick late (a 20 ms keep-alive wait ends after
//! 20 to 25 ms). Waits that end early cost the sweeper nothing until the earliest of them would
//! have been due: at 500 busy keep-alive connections it looks about once per wait length, not
//! every tick, so it neither takes the workers' cores from them nor sweeps the same waiters
//! over and over. A waiter that stopped waiting stays listed until the next look (at most one
//! wait length later).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Once, OnceLock, PoisonError};
use std::time::Duration;

use crate::engine::io::WaitIoWaker;
use crate::sync::PerWorker;

/// How late a coarse deadline may end: the sweeper looks at most once per tick.
pub const TICK: Duration = Duration::from_millis(5);

/// [`TICK`] in milliseconds of [`now_ms`]'s clock.
const TICK_MS: u64 = TICK.as_millis() as u64;

/// `Lists::next_look` while no look is planned: nothing armed, or a look under way.
const NOTHING: u64 = u64::MAX;

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
    /// When the sweeper looks next, on [`now_ms`]'s clock ([`NOTHING`]: none planned). Written
    /// under `gate`; read without it by [`Waiter::arm`].
    next_look: AtomicU64,
    gate: Mutex<()>,
    wake: Condvar,
}

static LISTS: OnceLock<Lists> = OnceLock::new();
static SWEEPER: Once = Once::new();

fn lists() -> &'static Lists {
    let lists = LISTS.get_or_init(|| Lists {
        shards: PerWorker::default(),
        next_look: AtomicU64::new(NOTHING),
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
        // Sequentially consistent, with the loads below and the sweeper's side (`unlist`,
        // `sweep`): either the sweeper sees this deadline or this sees that it must list the
        // waiter again, or move the next look.
        self.deadline.store(at, Ordering::SeqCst);
        let lists = lists();
        if !self.listed.load(Ordering::SeqCst) && !self.listed.swap(true, Ordering::SeqCst) {
            lock(lists.shards.get()).push(Arc::clone(self));
        }
        if at.saturating_add(TICK_MS) < lists.next_look.load(Ordering::SeqCst) {
            lists.look_by(at);
        }
    }

    /// Not waiting any more.
    pub(crate) fn disarm(&self) {
        self.deadline.store(0, Ordering::Release);
    }

    /// Takes the waiter off its list; `true` when it was armed again meanwhile and must stay.
    fn unlist(&self) -> bool {
        self.listed.store(false, Ordering::SeqCst);
        // An `arm` that saw `listed` still set pushed nothing: keep this entry for it.
        self.deadline.load(Ordering::SeqCst) != 0 && !self.listed.swap(true, Ordering::SeqCst)
    }
}

impl Lists {
    /// Makes the sweeper look by `at` at the latest.
    fn look_by(&self, at: u64) {
        let _gate = lock(&self.gate);
        if at < self.next_look.load(Ordering::SeqCst) {
            self.next_look.store(at, Ordering::SeqCst);
            self.wake.notify_one();
        }
    }
}

/// The sweeper thread: sleeps until its next look; then drops the waiters not waiting, wakes
/// the ones due and plans the next look for the earliest deadline left.
fn sweep(lists: &'static Lists) {
    let mut due: Vec<Arc<Waiter>> = Vec::new();
    let mut last = 0;
    let mut gate = lock(&lists.gate);
    loop {
        let now = loop {
            let next = lists.next_look.load(Ordering::SeqCst);
            if next == NOTHING {
                gate = lists
                    .wake
                    .wait(gate)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            let at = next.max(last + TICK_MS);
            let now = now_ms();
            if now >= at {
                break now;
            }
            gate = lists
                .wake
                .wait_timeout(gate, Duration::from_millis(at - now))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        };
        // From here until the next look is planned, every `arm` plans one itself.
        lists.next_look.store(NOTHING, Ordering::SeqCst);
        drop(gate);
        last = now;
        let mut earliest = NOTHING;
        for shard in lists.shards.iter() {
            lock(shard).retain(|w| {
                let mut at = w.deadline.load(Ordering::SeqCst);
                if at != 0 && at <= now {
                    match w
                        .deadline
                        .compare_exchange(at, 0, Ordering::SeqCst, Ordering::SeqCst)
                    {
                        Ok(_) => {
                            due.push(Arc::clone(w));
                            return w.unlist();
                        }
                        // Disarmed, or armed again (for later than `now`) meanwhile.
                        Err(changed) => at = changed,
                    }
                }
                if at == 0 {
                    return w.unlist();
                }
                earliest = earliest.min(at);
                true
            });
        }
        for w in due.drain(..) {
            w.waker.wakeup();
        }
        gate = lock(&lists.gate);
        if earliest < lists.next_look.load(Ordering::SeqCst) {
            lists.next_look.store(earliest, Ordering::SeqCst);
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

    /// Whether the sweeper has nothing listed and no look planned.
    fn sweeper_idle() -> bool {
        let lists = lists();
        let _gate = lock(&lists.gate);
        lists.next_look.load(Ordering::SeqCst) == NOTHING
            && lists.shards.iter().all(|s| lock(s).is_empty())
    }

    /// Whether a listed waiter's deadline is at least `ms` away.
    fn armed_beyond(ms: u64) -> bool {
        let far = now_ms() + ms;
        lists().shards.iter().any(|s| {
            lock(s)
                .iter()
                .any(|w| w.deadline.load(Ordering::SeqCst) >= far)
        })
    }

    /// One test for both, so that no other test's waits keep the sweeper from going idle
    /// (the long wait here stays listed, disarmed, until its deadline's look).
    #[test]
    fn a_wait_armed_while_the_sweeper_sleeps_or_plans_a_later_look_wakes_it() {
        let mut listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        crate::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            let (_peer, _) = listener.accept().unwrap();
            let mut buf = [0u8; 8];
            // The first wait starts the sweeper; once it has timed out the lists are empty
            // and the sweeper sleeps with no look planned.
            let first = s.read_within(&mut buf, Duration::from_millis(1)).unwrap();
            while !sweeper_idle() {
                crate::yield_now();
            }
            let second = s.read_within(&mut buf, Duration::from_millis(5)).unwrap();
            done.send((first, second)).unwrap();

            let mut long = TcpStream::connect(addr).unwrap();
            let (long_peer, _) = listener.accept().unwrap();
            let waiting = crate::spawn(move || {
                long.read_within(&mut [0u8; 8], Duration::from_secs(600))
                    .unwrap()
            });
            // The sweeper plans its next look for the long wait's deadline, 600 s away.
            while !armed_beyond(500_000) {
                crate::yield_now();
            }
            let short = s.read_within(&mut buf, Duration::from_millis(5)).unwrap();
            drop(long_peer);
            let ended = waiting.join().unwrap();
            done.send((short, ended)).unwrap();
        });
        let expected = [
            ((None, None), "a wait armed while the sweeper slept"),
            ((None, Some(0)), "a short wait armed after a long one"),
        ];
        for (want, what) in expected {
            let got = finished
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("{what} was not woken in time"));
            assert_eq!(got, want, "{what}");
        }
    }
}
