//! Fiber-aware `Mutex`, `RwLock` and `Condvar`: a waiting fiber parks, its worker runs others.
//!
//! Locks do not poison: a panic while holding one leaves the data as it was (like parking_lot).
//! They have no timed `lock`: critical sections are short by design; use `try_lock`, or a
//! [`Semaphore`](super::Semaphore) when acquisition itself must time out.

use std::ops::{Deref, DerefMut};
use std::sync::PoisonError;
use std::time::Duration;

use crate::engine;
use crate::time::Deadline;

/// A mutual-exclusion lock usable from fibers and plain threads.
#[derive(Debug, Default)]
pub struct Mutex<T: ?Sized> {
    inner: engine::sync::Mutex<T>,
}

/// Access to a locked [`Mutex`]'s data; unlocks when dropped.
pub struct MutexGuard<'a, T: ?Sized> {
    // Only `None` while a `Condvar` wait holds the engine's guard.
    inner: Option<engine::sync::MutexGuard<'a, T>>,
}

impl<T> Mutex<T> {
    /// A new unlocked mutex holding `value`.
    pub fn new(value: T) -> Self {
        Mutex {
            inner: engine::sync::Mutex::new(value),
        }
    }

    /// Consumes the mutex, returning the data.
    pub fn into_inner(self) -> T {
        self.inner
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Locks, parking the caller while another holder has it.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        MutexGuard {
            inner: Some(self.inner.lock().unwrap_or_else(PoisonError::into_inner)),
        }
    }

    /// Locks if free right now.
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        match self.inner.try_lock() {
            Ok(g) => Some(MutexGuard { inner: Some(g) }),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(MutexGuard {
                inner: Some(p.into_inner()),
            }),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Mutable access without locking (the borrow proves exclusivity).
    pub fn get_mut(&mut self) -> &mut T {
        self.inner.get_mut().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T: ?Sized> MutexGuard<'_, T> {
    fn engine_guard(&self) -> &engine::sync::MutexGuard<'_, T> {
        self.inner
            .as_ref()
            .expect("mutex guard used during a condvar wait")
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.engine_guard()
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.inner
            .as_mut()
            .expect("mutex guard used during a condvar wait")
    }
}

/// Waits for a condition protected by a [`Mutex`].
#[derive(Default)]
pub struct Condvar {
    inner: engine::sync::Condvar,
}

impl std::fmt::Debug for Condvar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Condvar")
    }
}

impl Condvar {
    /// A new condition variable.
    pub fn new() -> Self {
        Condvar::default()
    }

    /// Unlocks, waits for a notification, and locks again. Spurious wake-ups can happen.
    pub fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
        let g = guard
            .inner
            .take()
            .expect("nested condvar wait on one guard");
        guard.inner = Some(self.inner.wait(g).unwrap_or_else(PoisonError::into_inner));
    }

    /// Like [`wait`](Self::wait) but gives up after `timeout`; returns `true` on time-out.
    pub fn wait_timeout<T>(&self, guard: &mut MutexGuard<'_, T>, timeout: Duration) -> bool {
        let g = guard
            .inner
            .take()
            .expect("nested condvar wait on one guard");
        let (g, result) = self
            .inner
            .wait_timeout(g, engine::timeout(timeout))
            .unwrap_or_else(PoisonError::into_inner);
        guard.inner = Some(g);
        if result.timed_out() {
            engine::resume_on_worker();
        }
        result.timed_out()
    }

    /// Waits while `condition` holds.
    pub fn wait_while<T>(
        &self,
        guard: &mut MutexGuard<'_, T>,
        mut condition: impl FnMut(&mut T) -> bool,
    ) {
        while condition(&mut *guard) {
            self.wait(guard);
        }
    }

    /// Waits while `condition` holds, at most until `deadline`; returns `true` on time-out
    /// (the condition still holding).
    pub fn wait_while_until<T>(
        &self,
        guard: &mut MutexGuard<'_, T>,
        deadline: Deadline,
        mut condition: impl FnMut(&mut T) -> bool,
    ) -> bool {
        while condition(&mut *guard) {
            if deadline.expired() {
                return true;
            }
            self.wait_timeout(guard, deadline.remaining());
        }
        false
    }

    /// Wakes one waiter.
    pub fn notify_one(&self) {
        self.inner.notify_one();
    }

    /// Wakes every waiter.
    pub fn notify_all(&self) {
        self.inner.notify_all();
    }
}

/// A reader-writer lock usable from fibers and plain threads.
#[derive(Debug, Default)]
pub struct RwLock<T: ?Sized> {
    inner: engine::sync::RwLock<T>,
}

/// Shared access to an [`RwLock`]'s data.
pub struct RwLockReadGuard<'a, T: ?Sized>(engine::sync::RwLockReadGuard<'a, T>);
/// Exclusive access to an [`RwLock`]'s data.
pub struct RwLockWriteGuard<'a, T: ?Sized>(engine::sync::RwLockWriteGuard<'a, T>);

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T> RwLock<T> {
    /// A new unlocked lock holding `value`.
    pub fn new(value: T) -> Self {
        RwLock {
            inner: engine::sync::RwLock::new(value),
        }
    }

    /// Consumes the lock, returning the data.
    pub fn into_inner(self) -> T {
        self.inner
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T: ?Sized> RwLock<T> {
    /// Shared access, parking while a writer holds the lock.
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        RwLockReadGuard(self.inner.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Exclusive access, parking while anyone holds the lock.
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        RwLockWriteGuard(self.inner.write().unwrap_or_else(PoisonError::into_inner))
    }

    /// Shared access if available right now.
    pub fn try_read(&self) -> Option<RwLockReadGuard<'_, T>> {
        match self.inner.try_read() {
            Ok(g) => Some(RwLockReadGuard(g)),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(RwLockReadGuard(p.into_inner())),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Exclusive access if available right now.
    pub fn try_write(&self) -> Option<RwLockWriteGuard<'_, T>> {
        match self.inner.try_write() {
            Ok(g) => Some(RwLockWriteGuard(g)),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(RwLockWriteGuard(p.into_inner())),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }
}
