//! The offload pool: blocking work (files, DNS, SQLite, CPU-heavy calls) on OS threads.
//!
//! `blocking(f)` queues `f` for a bounded pool of threads and parks only the calling fiber, so the
//! worker keeps serving every other fiber and socket it owns. Threads start on demand up to the
//! configured bound and exit after [`IDLE_TIMEOUT`] without work. From a plain thread (not a
//! fiber), `f` simply runs on the caller.

use std::collections::VecDeque;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::counters::{BLOCKING_DONE, BLOCKING_QUEUED, BLOCKING_RUNNING, BLOCKING_THREADS};
use crate::engine::{self, sync::Blocker};
use crate::error::{panic_message, Error};

/// Default upper bound of pool threads.
pub const DEFAULT_THREADS: usize = 64;
/// Smallest accepted bound.
pub const MIN_THREADS: usize = 1;
/// Largest accepted bound.
pub const MAX_THREADS: usize = 4096;
/// An idle pool thread exits after this long without work.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(10);

type Job = Box<dyn FnOnce() + Send>;

struct State {
    queue: VecDeque<Job>,
    threads: usize,
    idle: usize,
}

struct Pool {
    state: Mutex<State>,
    work: Condvar,
    max_threads: AtomicUsize,
}

static POOL: Pool = Pool {
    state: Mutex::new(State {
        queue: VecDeque::new(),
        threads: 0,
        idle: 0,
    }),
    work: Condvar::new(),
    max_threads: AtomicUsize::new(DEFAULT_THREADS),
};

/// Sets the pool's thread bound (from the runtime configuration).
pub(crate) fn set_max_threads(n: usize) {
    POOL.max_threads
        .store(n.clamp(MIN_THREADS, MAX_THREADS), Relaxed);
}

impl State {
    /// Queues `job` and says whether to wake an idle thread and whether to start one (counted
    /// here already): a thread starts while the queued jobs outnumber the idle threads and the
    /// bound `max_threads` allows.
    ///
    /// An idle thread stays counted as idle until it has woken and taken the lock, so a burst
    /// of jobs can come in before it does: counting jobs against idle threads, rather than
    /// asking whether any thread is idle, keeps such a burst from queueing behind one thread
    /// (seen under load: four jobs that each hold their thread, one thread for all four).
    fn push(&mut self, job: Job, max_threads: usize) -> (bool, bool) {
        self.queue.push_back(job);
        let wake = self.idle > 0;
        let start = self.queue.len() > self.idle && self.threads < max_threads;
        if start {
            self.threads += 1;
        }
        (wake, start)
    }
}

impl Pool {
    /// Queues a job, waking an idle thread and starting one as [`State::push`] decides.
    fn submit(&'static self, job: Job) {
        let mut state = self.state.lock();
        BLOCKING_QUEUED.fetch_add(1, Relaxed);
        let (wake, start) = state.push(job, self.max_threads.load(Relaxed));
        drop(state);
        if wake {
            self.work.notify_one();
        }
        if start {
            self.start_thread();
        }
    }

    fn start_thread(&'static self) {
        let spawned = std::thread::Builder::new()
            .name("moria-blocking".into())
            .spawn(move || self.run_thread());
        match spawned {
            Ok(_) => {
                BLOCKING_THREADS.fetch_add(1, Relaxed);
            }
            Err(e) => {
                // Lower the bound to what the system gave us instead of failing the caller;
                // with no thread at all, the queued job runs here.
                let mut state = self.state.lock();
                state.threads -= 1;
                let threads = state.threads;
                self.max_threads.store(threads.max(MIN_THREADS), Relaxed);
                log::warn!("offload pool: cannot start a thread ({e}); bound lowered to {threads}");
                if threads == 0 {
                    if let Some(job) = state.queue.pop_front() {
                        drop(state);
                        run_job(job);
                    }
                }
            }
        }
    }

    fn run_thread(&'static self) {
        let mut state = self.state.lock();
        loop {
            if let Some(job) = state.queue.pop_front() {
                drop(state);
                run_job(job);
                state = self.state.lock();
                continue;
            }
            state.idle += 1;
            let timeout = self.work.wait_for(&mut state, IDLE_TIMEOUT);
            state.idle -= 1;
            if timeout.timed_out() && state.queue.is_empty() {
                state.threads -= 1;
                BLOCKING_THREADS.fetch_sub(1, Relaxed);
                return;
            }
        }
    }
}

fn run_job(job: Job) {
    BLOCKING_QUEUED.fetch_sub(1, Relaxed);
    BLOCKING_RUNNING.fetch_add(1, Relaxed);
    job();
    BLOCKING_RUNNING.fetch_sub(1, Relaxed);
    BLOCKING_DONE.fetch_add(1, Relaxed);
}

/// Where a pool thread leaves the result for the parked fiber.
struct Handoff<T> {
    result: Mutex<Option<std::thread::Result<T>>>,
    blocker: Blocker,
}

/// Runs `f` on the offload pool and parks only the calling fiber until it is done.
/// A panic in `f` comes back as [`Error::BlockingPanicked`]. From a plain thread `f` runs inline.
pub fn blocking<F, T>(f: F) -> Result<T, Error>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let outcome = if engine::in_fiber() {
        let handoff = Arc::new(Handoff {
            result: Mutex::new(None),
            blocker: Blocker::new(true),
        });
        let theirs = handoff.clone();
        POOL.submit(Box::new(move || {
            let r = catch_unwind(AssertUnwindSafe(f));
            *theirs.result.lock() = Some(r);
            theirs.blocker.unpark();
        }));
        loop {
            if let Some(r) = handoff.result.lock().take() {
                break r;
            }
            // A wake-up without a result is spurious; park again.
            let _ = handoff.blocker.park(None);
        }
    } else {
        catch_unwind(AssertUnwindSafe(f))
    };
    outcome.map_err(|p| Error::BlockingPanicked(panic_message(&*p)))
}

/// [`blocking_io`] for a closure that borrows from its caller (e.g. a `&str` address to
/// resolve): the calling fiber stays parked until the job has run, whatever it does.
pub(crate) fn blocking_io_borrowed<'a, F, T>(f: F) -> io::Result<T>
where
    F: FnOnce() -> io::Result<T> + Send + 'a,
    T: Send + 'static,
{
    let job: Box<dyn FnOnce() -> io::Result<T> + Send + 'a> = Box::new(f);
    // SAFETY: only the lifetime is erased. `blocking` returns only once the job has run to its
    // end (a panic in it is caught on the pool thread and handed back as the result, and the
    // caller parks again on every wake-up without one), so nothing `f` borrows is used after
    // the caller's frame, which outlives this call, is gone.
    let job: Box<dyn FnOnce() -> io::Result<T> + Send + 'static> =
        unsafe { std::mem::transmute(job) };
    blocking_io(job)
}

/// [`blocking`] for I/O: the one funnel for file and DNS calls; a panic becomes an `io::Error`.
pub fn blocking_io<F, T>(f: F) -> io::Result<T>
where
    F: FnOnce() -> io::Result<T> + Send + 'static,
    T: Send + 'static,
{
    blocking(f).map_err(io::Error::from)?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(threads: usize, idle: usize) -> State {
        State {
            queue: VecDeque::new(),
            threads,
            idle,
        }
    }

    #[test]
    fn a_burst_gets_threads_while_the_idle_one_has_not_woken_yet() {
        let mut s = state(1, 1);
        let decisions: Vec<_> = (0..4).map(|_| s.push(Box::new(|| {}), 8)).collect();
        // The idle thread takes the first job; each further one starts a thread.
        assert_eq!(
            decisions,
            [(true, false), (true, true), (true, true), (true, true)]
        );
        assert_eq!(s.threads, 4);
    }

    #[test]
    fn no_thread_beyond_the_bound_and_none_while_idle_ones_suffice() {
        let mut full = state(2, 0);
        assert_eq!(full.push(Box::new(|| {}), 2), (false, false));
        let mut spare = state(3, 2);
        assert_eq!(spare.push(Box::new(|| {}), 8), (true, false));
        assert_eq!(spare.push(Box::new(|| {}), 8), (true, false));
        assert_eq!(spare.threads, 3);
    }
}
