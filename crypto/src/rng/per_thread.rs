//! One generator per OS thread, seeded from the OS (`getrandom(2)`), reseeded on a byte budget
//! and in a child after `fork`, with no lock.
//!
//! # Fibers
//!
//! Moria's fibers migrate between worker threads at every wait, and `thread_local!` is unsound
//! across a yield (DESIGN.md §3). Here the thread's generator is reached only inside [`with`],
//! whose closures fill bytes and never yield: no I/O, no lock, no fiber call, just the cipher.
//! So a call starts and ends on one thread and holds no reference to the state afterwards;
//! a fiber that moves between two calls simply uses the next thread's generator (each is
//! independently seeded, so which one serves a call does not matter). [`with`] is never
//! inlined, so the compiler cannot compute the thread-local's address once in a caller and
//! reuse it after the caller yields and resumes on another thread.
//!
//! The state is taken out of the thread-local for the call and put back after it, rather than
//! borrowed: a fiber whose stack overflows mid-call loses its frames without their destructors
//! (DESIGN.md §3), and a borrow guard left behind would lock the thread out of its generator
//! for good. Here the state it held is only leaked (not wiped), and the thread's next call
//! seeds a new generator. A call that somehow re-enters (a signal handler) gets a fresh one too.

use std::cell::Cell;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

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
    static REGISTER: Once = Once::new();
    let mut rc = 0;
    // SAFETY: the handler only increments an atomic (async-signal-safe); registering a
    // handler has no other precondition.
    REGISTER
        .call_once(|| rc = unsafe { libc::pthread_atfork(None, None, Some(count_fork_in_child)) });
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

    fn reseed(&mut self, forks: u64) -> Result<()> {
        let mut seed = os_seed()?;
        let reseeded = self.drbg.reseed(&seed);
        wipe(&mut seed);
        self.forks = forks;
        reseeded
    }
}

/// Runs `f` on this thread's generator, seeding it first when it is new, over its byte
/// budget, or inherited through `fork`. `f` must not yield (see the module's note).
#[inline(never)]
pub(crate) fn with<T>(f: impl FnOnce(&mut Drbg) -> Result<T>) -> Result<T> {
    let taken = LOCAL
        .try_with(Cell::take)
        .map_err(|_| io::Error::other("the random generator is gone: the thread is exiting"))?;
    let forks = FORKS.load(Ordering::Relaxed);
    let mut local = match taken {
        Some(local) if local.is_current(forks) => local,
        Some(mut local) => {
            local.reseed(forks)?;
            local
        }
        None => Local::new()?,
    };
    let outcome = f(&mut local.drbg);
    // The thread-local was reachable a moment ago on this same thread, so this cannot fail;
    // if it did, the state would simply be dropped (and wiped).
    let _ = LOCAL.try_with(|cell| cell.set(Some(local)));
    outcome
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
