//! Deadlines: an instant to give up at, shared by every timed wait; and the coarse wall clock.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch from the coarse wall clock (`CLOCK_REALTIME_COARSE`: the time
/// at the kernel's last tick, a few milliseconds behind at most, read without the hardware
/// counter). For once-a-second values such as an HTTP `Date`, on paths where the precise
/// clock's cost shows.
pub fn coarse_unix_secs() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec for the call's duration.
    if unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut t) } == 0 {
        return u64::try_from(t.tv_sec).unwrap_or(0);
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Nanoseconds on the monotonic clock (`CLOCK_MONOTONIC`, the clock `Instant` reads) as one
/// integer: for durations on hot paths, where subtracting two `Instant`s costs as much as
/// reading one. Differences of two readings are durations; a value alone means nothing.
pub fn monotonic_nanos() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec for the call's duration.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(t.tv_nsec).unwrap_or(0);
    secs.wrapping_mul(1_000_000_000).wrapping_add(nanos)
}

/// A point in time after which a wait gives up with `TimedOut`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Deadline {
    at: Instant,
}

impl Deadline {
    /// The deadline `d` from now (saturating far in the future on overflow).
    pub fn after(d: Duration) -> Self {
        let now = Instant::now();
        Deadline {
            at: now
                .checked_add(d)
                .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600)),
        }
    }

    /// The deadline at `at`.
    pub fn at(at: Instant) -> Self {
        Deadline { at }
    }

    /// The instant of the deadline.
    pub fn instant(&self) -> Instant {
        self.at
    }

    /// Time left, zero once passed.
    pub fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// Whether the deadline has passed.
    pub fn expired(&self) -> bool {
        Instant::now() >= self.at
    }

    /// The standard error for an expired deadline.
    pub fn timed_out(what: &str) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::TimedOut, format!("{what} timed out"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarse_seconds_follow_the_wall_clock() {
        let secs = || {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs()
        };
        let before = secs();
        let coarse = coarse_unix_secs();
        let after = secs();
        // At most one tick behind: a second boundary may fall between the two clocks.
        assert!(
            coarse + 1 >= before && coarse <= after,
            "{before} {coarse} {after}"
        );
    }

    #[test]
    fn remaining_shrinks_to_zero() {
        let d = Deadline::after(Duration::ZERO);
        assert!(d.expired());
        assert_eq!(d.remaining(), Duration::ZERO);
        let far = Deadline::after(Duration::MAX);
        assert!(!far.expired());
        assert!(far.remaining() > Duration::from_secs(3600));
    }
}
