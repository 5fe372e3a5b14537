//! A counting semaphore whose waits park fibers, with a timed form.

use std::time::Duration;

use crate::engine;

/// A counting semaphore usable from fibers and plain threads.
pub struct Semaphore {
    inner: engine::sync::Semaphore,
}

impl std::fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semaphore")
            .field("available", &self.available())
            .finish()
    }
}

impl Semaphore {
    /// A semaphore holding `permits` permits.
    pub fn new(permits: usize) -> Self {
        Semaphore {
            inner: engine::sync::Semaphore::new(permits),
        }
    }

    /// Takes a permit, parking until one is free.
    pub fn acquire(&self) {
        self.inner.wait();
    }

    /// Takes a permit if one is free right now.
    pub fn try_acquire(&self) -> bool {
        self.inner.try_wait()
    }

    /// Takes a permit, giving up after `timeout`; returns whether it got one.
    pub fn acquire_timeout(&self, timeout: Duration) -> bool {
        let got = self.inner.wait_timeout(engine::timeout(timeout));
        if !got {
            engine::resume_on_worker();
        }
        got
    }

    /// Returns a permit, waking one waiter.
    pub fn release(&self) {
        self.inner.post();
    }

    /// Permits free right now.
    pub fn available(&self) -> usize {
        self.inner.get_value()
    }
}
