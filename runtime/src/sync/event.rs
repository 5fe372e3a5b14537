//! `Event` (Mordor's FiberEvent) and `WaitGroup`: a flag to wait on, and a counter to wait out.

use std::time::Duration;

use super::{Condvar, Mutex};
use crate::time::Deadline;

/// How an [`Event`] behaves once set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reset {
    /// Stays set, releasing every waiter, until `reset()`.
    Manual,
    /// Releases exactly one waiter, then clears itself.
    Auto,
}

/// A flag fibers and threads can wait on.
#[derive(Debug)]
pub struct Event {
    set: Mutex<bool>,
    cond: Condvar,
    mode: Reset,
}

impl Event {
    /// A cleared event with the given reset mode.
    pub fn new(mode: Reset) -> Self {
        Event {
            set: Mutex::new(false),
            cond: Condvar::new(),
            mode,
        }
    }

    /// Sets the event: wakes all waiters (manual) or one (auto).
    pub fn set(&self) {
        *self.set.lock() = true;
        match self.mode {
            Reset::Manual => self.cond.notify_all(),
            Reset::Auto => self.cond.notify_one(),
        }
    }

    /// Clears the event.
    pub fn reset(&self) {
        *self.set.lock() = false;
    }

    /// Whether the event is set right now.
    pub fn is_set(&self) -> bool {
        *self.set.lock()
    }

    /// Waits until the event is set.
    pub fn wait(&self) {
        let mut set = self.set.lock();
        while !*set {
            self.cond.wait(&mut set);
        }
        if self.mode == Reset::Auto {
            *set = false;
        }
    }

    /// Waits at most `timeout`; returns whether the event was set.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let mut set = self.set.lock();
        if self
            .cond
            .wait_while_until(&mut set, Deadline::after(timeout), |set| !*set)
        {
            return false;
        }
        if self.mode == Reset::Auto {
            *set = false;
        }
        true
    }
}

/// Waits for a counted group of tasks to finish (Go's `sync.WaitGroup`).
#[derive(Debug, Default)]
pub struct WaitGroup {
    count: Mutex<usize>,
    cond: Condvar,
}

impl WaitGroup {
    /// An empty group.
    pub fn new() -> Self {
        WaitGroup::default()
    }

    /// Adds `n` tasks to wait for.
    pub fn add(&self, n: usize) {
        *self.count.lock() += n;
    }

    /// Marks one task done; wakes the waiters when none is left.
    pub fn done(&self) {
        let mut count = self.count.lock();
        *count = count.saturating_sub(1);
        if *count == 0 {
            self.cond.notify_all();
        }
    }

    /// Tasks still pending.
    pub fn pending(&self) -> usize {
        *self.count.lock()
    }

    /// Waits until every task is done.
    pub fn wait(&self) {
        let mut count = self.count.lock();
        while *count > 0 {
            self.cond.wait(&mut count);
        }
    }

    /// Waits at most `timeout`; returns whether every task was done.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let mut count = self.count.lock();
        !self
            .cond
            .wait_while_until(&mut count, Deadline::after(timeout), |n| *n > 0)
    }
}
