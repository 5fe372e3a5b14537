//! The pool of connection working states: a connection takes one when it has bytes to serve
//! and gives it back when it waits, parks or ends, so buffers follow the busy connections, not
//! the open ones. The pool is kept per worker thread ([`PerWorker`]): a worker takes back the
//! states it put back itself, still in its core's cache, and workers never contend for one
//! lock (measured in bench/results/2026-12-01-eight-workers-per-worker-pools.md).

use std::sync::{Mutex, PoisonError};

use moria_runtime::sync::PerWorker;

use super::buffers::{Conn, Scratch, INIT_READ_BUF, INIT_WRITE_BUF, WRITE_FLUSH_AT};

/// Working states kept for reuse per worker thread (a worker rarely serves more than a few at
/// once: a connection gives its state back as soon as its answers are out).
pub(crate) const POOL_MAX: usize = 32;

/// A server's spare working states, per worker thread. Plain locks: held for a push or a pop,
/// never across a wait, and contended only when a fiber moved threads between its take and its
/// put.
pub(crate) struct ConnPool<S> {
    shards: PerWorker<Mutex<Shard<S>>>,
}

impl<S> Default for ConnPool<S> {
    fn default() -> Self {
        ConnPool {
            shards: PerWorker::default(),
        }
    }
}

/// One worker's spare states, and how many it lent out less how many came back to it (a
/// state taken on one worker may come back to another, so one shard's count can go below
/// zero; the sum over shards is the number in use).
struct Shard<S> {
    // Connections hold their state as a `Box<Conn>`: keeping the boxes lets `take` and `put`
    // move a pointer, never copy the state or allocate.
    #[allow(clippy::vec_box)]
    free: Vec<Box<Conn<S>>>,
    lent: isize,
}

impl<S> Default for Shard<S> {
    fn default() -> Self {
        Shard {
            free: Vec::new(),
            lent: 0,
        }
    }
}

impl<S: Scratch> ConnPool<S> {
    /// A working state with empty buffers.
    pub(crate) fn take(&self) -> Box<Conn<S>> {
        let spare = {
            let mut shard = self.shard();
            shard.lent += 1;
            shard.free.pop()
        };
        spare.unwrap_or_else(|| Box::new(Conn::new()))
    }

    /// Gives a working state back: what it still holds for a request (a response body, a
    /// file) is dropped and buffers grown past their usual size shrink back.
    pub(crate) fn put(&self, mut conn: Box<Conn<S>>) {
        conn.clear();
        let mut shard = self.shard();
        shard.lent -= 1;
        if shard.free.len() < POOL_MAX {
            shard.free.push(conn);
        }
    }

    fn shard(&self) -> std::sync::MutexGuard<'_, Shard<S>> {
        self.shards
            .get()
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Working states waiting in the pool, and working states in use (taken, not yet back).
    pub(crate) fn counts(&self) -> (usize, usize) {
        let (mut pooled, mut lent) = (0, 0);
        for shard in self.shards.iter() {
            let shard = shard.lock().unwrap_or_else(PoisonError::into_inner);
            pooled += shard.free.len();
            lent += shard.lent;
        }
        (pooled, usize::try_from(lent).unwrap_or(0))
    }
}

impl<S: Scratch> Conn<S> {
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
            self.wbuf.shrink_to(INIT_WRITE_BUF);
        }
        self.scan.reset();
        self.app.clear();
        self.read_timeout = None;
        self.answered = 0;
        self.head_deadline = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Nothing;

    impl Scratch for Nothing {
        fn clear(&mut self) {}
    }

    #[test]
    fn states_taken_on_one_thread_and_given_back_on_another_are_counted_once() {
        let pool = ConnPool::<Nothing>::default();
        let first = pool.take();
        let second = pool.take();
        assert_eq!(pool.counts(), (0, 2));
        std::thread::scope(|s| {
            s.spawn(|| pool.put(first));
        });
        assert_eq!(pool.counts(), (1, 1));
        pool.put(second);
        assert_eq!(pool.counts(), (2, 0));
    }
}
