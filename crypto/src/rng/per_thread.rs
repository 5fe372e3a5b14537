//! One generator per OS thread, seeded from the OS (`getrandom(2)`), reseeded on a byte budget
//! and in a child after `fork`, with no lock.
//!
//! # Fibers
//!
//! Moria's fibers migrate between worker threads at every wait, and `thread_local!` is unsound
//! across a yield (DESIGN.md §3). Here a call ([`with`]) takes the thread's generator out of
//! the thread-local, runs its closure on it and puts it back; the closures fill bytes and never
//! yield (no I/O, no lock, no fiber call, just the cipher), so a call starts and ends on one
//! thread and holds nothing of the thread's afterwards. A fiber that moves between two calls
//! simply uses the next thread's generator (each is independently seeded, so which one serves
//! a call does not matter). The thread-local itself is touched only in [`take`] and [`put`],
//! which are never inlined: the compiler cannot compute its address once in a caller and reuse
//! it after the caller yields and resumes on another thread.
//!
//! Taking the state out rather than borrowing it also survives a stack overflow: a fiber that
//! overflows mid-call loses its frames without their destructors (DESIGN.md §3), and a borrow
//! guard left behind would lock the thread out of its generator for good. Here the state it
//! held is only leaked (not wiped), and the thread's next call seeds a new generator. A call
//! that somehow re-enters (a signal handler), or one from a thread-local destructor after the
//! generator was dropped, gets a fresh one too.

use std::cell::Cell;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use super::drbg::{Drbg, SEED_LEN};
use crate::error::Result;
use crate::tls::wipe;

/// Bytes one OS seed may produce before the next call takes a fresh one (64 MiB).
pub(crate) const RESEED_AFTER: u64 = 64 << 20;

/// The thread's generator and the fork count it was seeded under.
struct Local {
    drbg: Drbg,
    forks: u64,
}

thread_local! {
    static LOCAL: Cell<Option<Box<Local>>> = const { Cell::new(None) };
}

/// Forks this process has gone through, counted in each child by a `pthread_atfork` handler.
static FORKS: AtomicU64 = AtomicU64::new(0);

extern "C" fn count_fork_in_child() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// Registers the fork handler once, before the first generator exists: a child copies its
/// parent's generator, and the handler makes that copy stale before the child can use it.
/// (A child made by a raw `clone` syscall, not by libc's `fork`, is not seen; nothing in
/// Moria does that.)
fn watch_forks() -> Result<()> {
    static REGISTERED: OnceLock<i32> = OnceLock::new();
    // SAFETY: the handler only increments an atomic (async-signal-safe); registering a
    // handler has no other precondition.
    let rc = *REGISTERED
        .get_or_init(|| unsafe { libc::pthread_atfork(None, None, Some(count_fork_in_child)) });
    match rc {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno).into()),
    }
}

/// A fresh seed from the kernel.
fn os_seed() -> Result<[u8; SEED_LEN]> {
    let mut seed = [0u8; SEED_LEN];
    getrandom::fill(&mut seed).map_err(|e| io::Error::other(format!("getrandom: {e}")))?;
    Ok(seed)
}

impl Local {
    /// A generator seeded from the OS, the fork handler registered first.
    fn new() -> Result<Box<Local>> {
        watch_forks()?;
        // Read after registering, so a fork from here on is always counted as newer.
        let forks = FORKS.load(Ordering::Relaxed);
        let mut seed = os_seed()?;
        let drbg = Drbg::new(&seed);
        wipe(&mut seed);
        Ok(Box::new(Local { drbg: drbg?, forks }))
    }

    /// Whether the generator may go on: same process as at seeding, budget not spent.
    fn is_current(&self, forks: u64) -> bool {
        self.forks == forks && self.drbg.generated() < RESEED_AFTER
    }

    /// A fresh OS seed for the generator (the budget is spent, or this is a forked child).
    fn reseed(&mut self, forks: u64) -> Result<()> {
        let mut seed = os_seed()?;
        let reseeded = self.drbg.reseed(&seed);
        wipe(&mut seed);
        self.forks = forks;
        reseeded
    }
}

/// The thread's generator, taken out of the thread-local (`None` if it has none).
#[inline(never)]
fn take() -> Option<Box<Local>> {
    LOCAL.try_with(Cell::take).ok().flatten()
}

/// Gives the generator back to the thread-local (dropped, and wiped, if that is gone).
#[inline(never)]
fn put(local: Box<Local>) {
    let _ = LOCAL.try_with(|cell| cell.set(Some(local)));
}

/// A generator ready for use from what [`take`] found: reseeded, or new (out of line: the
/// common path stays small).
#[cold]
#[inline(never)]
fn ready(taken: Option<Box<Local>>, forks: u64) -> Result<Box<Local>> {
    match taken {
        Some(mut local) => {
            local.reseed(forks)?;
            Ok(local)
        }
        None => Local::new(),
    }
}

/// Runs `f` on this thread's generator, seeding it first when it is new, over its byte
/// budget, or inherited through `fork`. `f` must not yield (see the module's note).
#[inline]
pub(crate) fn with<T>(f: impl FnOnce(&mut Drbg) -> Result<T>) -> Result<T> {
    let forks = FORKS.load(Ordering::Relaxed);
    let mut local = match take() {
        Some(local) if local.is_current(forks) => local,
        other => ready(other, forks)?,
    };
    // Boxed while `put` runs: a 16-byte result stays in registers, where the crate's
    // 64-byte `Result` was spilled and copied back (a measured third of a `u32()` call).
    let outcome = f(&mut local.drbg).map_err(Box::new);
    put(local);
    outcome.map_err(|e| *e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_brings_a_fresh_seed() {
        let mut big = vec![0u8; 1 << 20];
        let steps = RESEED_AFTER / (1 << 20);
        for _ in 0..steps - 1 {
            with(|d| d.fill(&mut big)).unwrap();
        }
        let below = with(|d| Ok(d.generated())).unwrap();
        assert_eq!(
            below,
            RESEED_AFTER - (1 << 20),
            "no reseed below the budget"
        );
        with(|d| d.fill(&mut big)).unwrap();
        assert_eq!(
            with(|d| Ok(d.generated())).unwrap(),
            0,
            "reseeded at the budget"
        );
    }

    #[test]
    fn a_call_abandoned_mid_way_leaves_the_thread_a_working_generator() {
        with(|d| d.fill(&mut [0u8; 8])).unwrap();
        // What a stack overflow inside `f` does: the taken state never comes back.
        std::mem::forget(LOCAL.with(Cell::take));
        assert_eq!(with(|d| Ok(d.generated())).unwrap(), 0);
        with(|d| d.fill(&mut [0u8; 8])).unwrap();
    }

    #[test]
    fn threads_have_their_own_streams() {
        let draw = || with(|d| d.take::<16>()).unwrap();
        let here = draw();
        let there = std::thread::spawn(draw).join().unwrap();
        assert_ne!(here, there);
    }
}
