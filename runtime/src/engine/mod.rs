//! The one gate to the engine (`may`): the files under `engine/` are the only ones in the crate
//! that name it, so this folder lists the whole surface Moria uses, and a replacement engine
//! starts here.
//!
//! | file | what the rest of the crate gets from the engine |
//! |---|---|
//! | `mod.rs` | [`in_fiber`], [`resume_on_worker`] (the hop back from the timer thread), timeout conversion |
//! | [`coroutine`] | fiber spawn (`Builder`, `JoinHandle`), `yield_now`, `sleep`, the current fiber's name, `LocalKey` |
//! | [`setup`] | applying the validated configuration to the scheduler (once, from `config`) |
//! | [`io`] | the socket types and the readiness traits the `net` module builds on; `Registered`, which drops a `CoIo` out of the engine's epoll before closing its descriptor |
//! | [`sync`] | the parking primitives under `crate::sync` and the offload pool's `Blocker` |
//!
//! Types are re-exported as they are, never wrapped: the socket read/write paths call the engine
//! directly, with nothing in between, and a wrapper here would add a call on every read. So the
//! files that use these names still call the engine's own methods on them (`WaitIo`,
//! `set_read_timeout`, `spawn_local`): a replacement engine must offer those names and methods,
//! or those files change with it. Which files those are: `fiber.rs`, `local.rs`, `blocking.rs`,
//! `coarse_timer.rs`, `wake_timer.rs`, `sync/mutex.rs`, `sync/semaphore.rs` and `net/` (accept,
//! park, ready, tcp, udp, unix, timeouts).
//!
//! Every entry point that may start the engine calls `config::ensure()` first, so the engine
//! never starts with a configuration other than the validated one.

pub(crate) mod coroutine;
pub(crate) mod io;
pub(crate) mod setup;
pub(crate) mod sync;

use std::time::Duration;

/// Whether the caller runs inside a fiber (as opposed to a plain OS thread).
#[inline]
pub fn in_fiber() -> bool {
    may::coroutine::is_coroutine()
}

/// After a timer wake-up the engine runs the fiber on its timer thread; hop back to a worker.
#[inline]
pub(crate) fn resume_on_worker() {
    if in_fiber() {
        may::coroutine::yield_now();
    }
}

/// Converts a timeout for the engine, which keeps timeouts in whole milliseconds and treats 0
/// as "no timeout": anything below 1 ms would wait forever, so round up to the next millisecond.
#[inline]
pub(crate) fn timeout(d: Duration) -> Duration {
    let ms = d.as_nanos().div_ceil(1_000_000).max(1);
    Duration::from_millis(u64::try_from(ms).unwrap_or(u64::MAX))
}

/// [`timeout`] for socket options; a zero timeout is refused as std does.
pub(crate) fn socket_timeout(d: Option<Duration>) -> std::io::Result<Option<Duration>> {
    match d {
        Some(d) if d.is_zero() => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "cannot set a 0 duration timeout",
        )),
        other => Ok(other.map(timeout)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_timeouts_round_up_to_whole_milliseconds() {
        assert_eq!(timeout(Duration::from_nanos(1)), Duration::from_millis(1));
        assert_eq!(timeout(Duration::ZERO), Duration::from_millis(1));
        assert_eq!(
            timeout(Duration::from_micros(1500)),
            Duration::from_millis(2)
        );
        assert_eq!(timeout(Duration::from_millis(7)), Duration::from_millis(7));
        assert!(socket_timeout(Some(Duration::ZERO)).is_err());
        assert_eq!(socket_timeout(None).unwrap(), None);
    }
}
