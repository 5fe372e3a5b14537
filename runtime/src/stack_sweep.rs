//! Giving back the pooled stacks' pages when the process goes quiet.
//!
//! The engine's stack pool is first in, first out: a fiber takes the stack at the pool's head
//! and its stack goes back at the tail. A burst of short fibers (10,000 connections each served
//! once, then parked) therefore passes through every pooled stack, and each keeps the pages its
//! fibers touched (three pages under the top for moria-http's connection fibers): 256 stacks ×
//! 8 KiB, 2 MiB that a burst leaves resident for as long as the process runs, whatever the
//! number of connections afterwards. `stack_trim` gives back only what lies deeper than its
//! `KEEP` (32 KiB), and cannot look at every fiber end (a look costs four pooled spawns).
//!
//! So a thread waits until the pool's capacity of fibers ended since the last sweep (a stack goes
//! back to the pool when its fiber ends, with what that fiber touched; the fiber end that makes
//! the count wakes the thread), then looks every [`QUIET`] until no fiber ended during the last
//! interval, and sweeps: one
//! fiber starts the pool's capacity of fibers, one after the other, each of which gives back
//! every page of its own stack below its frame (the top page, where its frame is, and the
//! bottom pages with the engine's sentinel stay). Taken from the head and put back at the tail,
//! they visit every pooled stack once.
//!
//! Trade-offs:
//! - A sweep of the default pool of 256 stacks, each holding three pages under its top, took
//!   0.72 ms of process CPU time (median of 9, release build, load 13-16), 2.8 µs per stack: a
//!   spawn, a `madvise`, the pages' unmapping. Sweeps come at most once per pool's capacity of
//!   fibers ended, so at most one stack's sweep per fiber, and only after a quiet interval: a
//!   server under steady load never sweeps. Each stack's next fiber takes its first touches of
//!   those pages as zero-filled page faults again. The sweep's own fibers are not counted as fibers
//!   (in [`stats`](crate::stats())) and do not count towards the next sweep.
//! - The thread sleeps while no sweep is due: an idle process is not woken. Once one is due it
//!   looks every [`QUIET`] until the process is quiet; a fiber's end costs one atomic load and
//!   compare (the wake-up only for the end that makes a sweep due).
//! - Stacks in use (a fiber waiting in a read) are not swept: only the pool's.
//!
//! Measured on the file server with 10,000 idle keep-alive connections, one GET each
//! (bench/results/2026-12-02-idle-http.md): the pooled stacks went from 4,068 KiB resident
//! after the burst to 2,052 KiB, what they hold at start (the top page and the sentinel's).

use std::panic::catch_unwind;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::OnceLock;
use std::thread::Thread;
use std::time::Duration;

use crate::counters::FIBERS_FINISHED;
use crate::engine::coroutine::Builder;

/// How long no fiber must end for the process to count as quiet.
pub(crate) const QUIET: Duration = Duration::from_millis(50);

/// Sweeps run since start.
static SWEEPS: AtomicU64 = AtomicU64::new(0);

/// The count of ended fibers from which a sweep is due, `u64::MAX` while the thread is not
/// waiting for one (no thread, or one already awake).
static DUE_AT: AtomicU64 = AtomicU64::new(u64::MAX);

/// The sweeping thread, to wake when a sweep becomes due.
static SWEEPER: OnceLock<Thread> = OnceLock::new();

/// Called at each fiber's end with the count of ended fibers it made: wakes the sweeping thread
/// if that count makes a sweep due.
pub(crate) fn fiber_finished(ended: u64) {
    if ended >= DUE_AT.load(SeqCst) {
        DUE_AT.store(u64::MAX, Relaxed);
        if let Some(sweeper) = SWEEPER.get() {
            sweeper.unpark();
        }
    }
}

/// Sweeps of the stack pool run since start.
pub(crate) fn sweeps() -> u64 {
    SWEEPS.load(Relaxed)
}

/// Starts the thread that sweeps a pool of `capacity` stacks when the process goes quiet
/// (nothing for an empty pool). Called once, when the configuration is applied.
pub(crate) fn start(capacity: usize) {
    if capacity == 0 {
        return;
    }
    let started = std::thread::Builder::new()
        .name("moria-stack-sweep".into())
        .spawn(move || watch(capacity as u64));
    if let Err(e) = started {
        log::warn!("cannot start the stack-sweep thread ({e}): pooled stacks keep their pages");
    }
}

/// Sleeps until the pool's `capacity` of fibers ended since the last sweep, then looks every
/// [`QUIET`] until no fiber ended since the last look, and sweeps.
fn watch(capacity: u64) {
    // Set before the first due count is published, so an end that sees the count finds the
    // thread to wake.
    let _ = SWEEPER.set(std::thread::current());
    // Counted from the start of the process, not of this thread: a burst that ends before the
    // thread first runs still makes a sweep due.
    let mut swept_at = 0u64;
    loop {
        // Published before the count is read: an end that makes the count after this read sees
        // it and wakes the thread (both sides sequentially consistent).
        DUE_AT.store(swept_at.wrapping_add(capacity), SeqCst);
        while FIBERS_FINISHED.load(SeqCst).wrapping_sub(swept_at) < capacity {
            std::thread::park();
        }
        DUE_AT.store(u64::MAX, Relaxed);
        let mut seen = FIBERS_FINISHED.load(Relaxed);
        loop {
            std::thread::sleep(QUIET);
            let ended = FIBERS_FINISHED.load(Relaxed);
            if ended == seen {
                break;
            }
            seen = ended;
        }
        swept_at = seen;
        sweep(capacity);
    }
}

/// Runs one sweep of `capacity` stacks in a fiber and waits for it.
fn sweep(capacity: u64) {
    // The engine panics when it cannot map a stack: the sweep is skipped, the thread goes on.
    // SAFETY: the engine marks spawning unsafe for fiber code that uses thread-local storage
    // across a wait or overflows its stack: this fiber never waits and stays shallow.
    let spawned = catch_unwind(|| unsafe { Builder::new().spawn(move || visit(capacity)) });
    match spawned {
        Ok(Ok(fiber)) => {
            if fiber.join().is_ok() {
                SWEEPS.fetch_add(1, Relaxed);
            }
        }
        Ok(Err(e)) => log::debug!("stack sweep not started: {e}"),
        Err(_) => log::debug!("stack sweep not started: no stack for its fiber"),
    }
}

/// The sweep's fiber: starts `capacity` fibers one after the other, each giving back its own
/// stack's pages; each runs to its end before the next starts, so each takes the pool's next
/// stack. Its own stack, taken from the pool's head, it sweeps last (its frame is near the
/// top, as the children's are).
fn visit(capacity: u64) {
    for _ in 0..capacity {
        // SAFETY: as in `sweep`; the child's whole body is one `madvise`.
        let child = unsafe { Builder::new().spawn_local(crate::stack_trim::sweep_own_stack) };
        if child.is_err() {
            break;
        }
    }
    crate::stack_trim::sweep_own_stack();
}
