//! Fibers as the engine makes them: spawn, yield, sleep, the running fiber's name, and the
//! engine's fiber-local key.

use std::time::Duration;

pub(crate) use may::coroutine::{Builder, JoinHandle};
pub(crate) use may::LocalKey;

/// Lets the worker run its other fibers (the caller must be a fiber).
#[inline]
pub(crate) fn yield_now() {
    may::coroutine::yield_now();
}

/// Parks the calling fiber for `d`; it wakes on the engine's timer thread.
#[inline]
pub(crate) fn sleep(d: Duration) {
    may::coroutine::sleep(d);
}

/// The name the running fiber was spawned with, if any (the caller must be a fiber).
pub(crate) fn current_name() -> Option<String> {
    may::coroutine::current().name().map(str::to_string)
}
