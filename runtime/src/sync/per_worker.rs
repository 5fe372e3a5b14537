//! [`PerWorker`]: one value per worker thread, for state that fibers touch for a moment on
//! every request (pools of buffers, counters) and that should stay in one core's cache instead
//! of moving between cores with each use.
//!
//! One value shared by every worker costs more than its lock: each use pulls the value's cache
//! lines (and whatever it points to, like pooled buffers) from the core that used it last. On 8
//! workers that traffic, not the work, becomes the price of a small request. With one value per
//! thread, a worker finds what it put back itself, still in its cache.
//!
//! [`PerWorker::get`] is a locality hint, not ownership: a fiber may resume on another thread
//! after any wait, and threads share a value when there are more threads than values. So `T`
//! must be correct when shared (a lock, atomics); `PerWorker` only makes sharing rare.
//!
//! The index of the calling thread lives in a `thread_local!`. That is the one sound use of
//! one in fiber code: it is read and used at once, never held across a wait, and a stale or
//! shared index costs locality, never correctness.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Most values one [`PerWorker`] holds (threads beyond it share).
const MAX_VALUES: usize = 64;

/// A value per thread, the way a worker's run queue is per thread: see the module docs.
pub struct PerWorker<T> {
    values: Box<[Padded<T>]>,
}

/// A value on cache lines of its own (two lines: adjacent-line prefetching pairs them).
#[repr(align(128))]
struct Padded<T>(T);

static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static THREAD: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// A small number for the calling thread, given on its first call, fixed for its life.
fn thread_index() -> usize {
    THREAD.with(|t| match t.get() {
        usize::MAX => {
            let i = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
            t.set(i);
            i
        }
        i => i,
    })
}

impl<T> PerWorker<T> {
    /// One value per CPU of the machine (rounded up to a power of two, at most 64), each made
    /// by `init`.
    pub fn new(mut init: impl FnMut() -> T) -> PerWorker<T> {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let n = cpus.next_power_of_two().min(MAX_VALUES);
        PerWorker {
            values: (0..n).map(|_| Padded(init())).collect(),
        }
    }

    /// The value of the thread running the caller.
    #[inline]
    pub fn get(&self) -> &T {
        self.at(thread_index())
    }

    /// The value of the thread with index `i` (indices past the count wrap around).
    fn at(&self, i: usize) -> &T {
        &self.values[i & (self.values.len() - 1)].0
    }

    /// Every value (for totals and for draining).
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.values.iter().map(|p| &p.0)
    }
}

impl<T: Default> Default for PerWorker<T> {
    fn default() -> Self {
        PerWorker::new(T::default)
    }
}

impl<T> std::fmt::Debug for PerWorker<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerWorker")
            .field("values", &self.values.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn a_thread_keeps_its_value_and_threads_spread_over_values() {
        let per = PerWorker::new(|| AtomicU64::new(0));
        let n = per.iter().count();
        assert!(n.is_power_of_two() && n <= MAX_VALUES);
        assert!(std::ptr::eq(per.get(), per.get()));
        assert!(std::ptr::eq(per.get(), per.at(thread_index())));
        // Every thread gets an index of its own, and n consecutive indices reach n values.
        let mut indices: Vec<usize> = (0..n)
            .map(|_| std::thread::scope(|s| s.spawn(thread_index).join().unwrap()))
            .collect();
        indices.sort_unstable();
        indices.dedup();
        assert_eq!(indices.len(), n);
        let mut values: Vec<usize> = (indices[0]..indices[0] + n)
            .map(|i| per.at(i) as *const AtomicU64 as usize)
            .collect();
        values.sort_unstable();
        values.dedup();
        assert_eq!(values.len(), n);
    }

    #[test]
    fn values_sit_on_cache_lines_of_their_own() {
        let per = PerWorker::new(|| 0u8);
        let addrs: Vec<usize> = per.iter().map(|v| v as *const u8 as usize).collect();
        for w in addrs.windows(2) {
            assert!(w[1] - w[0] >= 128);
        }
    }
}
