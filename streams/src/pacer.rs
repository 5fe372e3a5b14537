//! The arithmetic of [`crate::Throttle`], apart from any clock: given when bytes went through,
//! how long to wait so the average stays at the rate.
//!
//! The schedule is absolute: `n` bytes sent since `anchor` are due no earlier than
//! `anchor + n / rate`. A late wake-up or a skipped tiny sleep is therefore made up on the next
//! operation instead of accumulating, and there is no minimum sleep (Mordor's throttle slept at
//! least 100 ms per operation, whatever the rate).

use std::time::{Duration, Instant};

/// Operations are cut into pieces of at most this fraction of a second of traffic, so a large
/// buffer is sent as a smooth series instead of one burst followed by one long sleep.
pub const QUANTA_PER_SECOND: u64 = 50;
/// Idle time that may be "saved up" and spent as a burst afterwards.
pub const MAX_IDLE_CREDIT: Duration = Duration::from_millis(20);
/// Waits shorter than this are not slept but carried to the next operation.
pub const MIN_SLEEP: Duration = Duration::from_millis(1);

/// One direction's schedule.
#[derive(Debug, Clone)]
pub struct Pacer {
    rate: u64,
    anchor: Option<Instant>,
    sent: u64,
}

impl Pacer {
    /// A schedule for `rate` bytes per second (must be > 0).
    pub fn new(rate: u64) -> Self {
        Pacer {
            rate: rate.max(1),
            anchor: None,
            sent: 0,
        }
    }

    /// The rate in bytes per second.
    pub fn rate(&self) -> u64 {
        self.rate
    }

    /// The largest piece one operation should move.
    pub fn quantum(&self) -> usize {
        usize::try_from((self.rate / QUANTA_PER_SECOND).max(1)).unwrap_or(usize::MAX)
    }

    /// Records `n` bytes moved at `now`; returns how long to wait before the next operation
    /// (zero when on schedule or when the wait is below [`MIN_SLEEP`]).
    pub fn record(&mut self, n: usize, now: Instant) -> Duration {
        let anchor = *self.anchor.get_or_insert(now);
        let due = anchor + self.time_for(self.sent);
        if now > due + MAX_IDLE_CREDIT {
            self.anchor = Some(now.checked_sub(MAX_IDLE_CREDIT).unwrap_or(now));
            self.sent = 0;
        }
        self.sent += n as u64;
        let anchor = self.anchor.unwrap_or(now);
        let wait = (anchor + self.time_for(self.sent)).saturating_duration_since(now);
        if wait < MIN_SLEEP {
            Duration::ZERO
        } else {
            wait
        }
    }

    /// The time `bytes` take at the rate.
    fn time_for(&self, bytes: u64) -> Duration {
        let nanos = u128::from(bytes) * 1_000_000_000 / u128::from(self.rate);
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives a pacer with a simulated clock that sleeps exactly as told; returns the end time.
    fn simulate(rate: u64, total: usize, piece: usize) -> Duration {
        let start = Instant::now();
        let mut now = start;
        let mut pacer = Pacer::new(rate);
        let mut left = total;
        while left > 0 {
            let n = left.min(piece).min(pacer.quantum());
            left -= n;
            now += pacer.record(n, now);
        }
        now - start
    }

    #[test]
    fn average_rate_holds_at_any_piece_size() {
        for piece in [1, 100, 4096, 65536, 1 << 20] {
            let elapsed = simulate(100_000, 1_000_000, piece);
            // 1 MB at 100 kB/s is 10 s; the last piece's wait is the only slack.
            assert!(
                elapsed >= Duration::from_millis(9_990),
                "{piece}: {elapsed:?}"
            );
            assert!(
                elapsed <= Duration::from_millis(10_001),
                "{piece}: {elapsed:?}"
            );
        }
    }

    #[test]
    fn no_minimum_sleep_at_high_rates() {
        let mut pacer = Pacer::new(1_000_000_000);
        let now = Instant::now();
        assert_eq!(pacer.record(1000, now), Duration::ZERO);
        let wait = pacer.record(10_000_000, now);
        assert_eq!(wait, Duration::from_millis(10) + Duration::from_micros(1));
    }

    #[test]
    fn quantum_scales_with_rate() {
        assert_eq!(Pacer::new(1).quantum(), 1);
        assert_eq!(Pacer::new(50_000).quantum(), 1000);
        assert_eq!(Pacer::new(0).rate(), 1);
    }

    #[test]
    fn idle_time_gives_only_a_bounded_burst() {
        let start = Instant::now();
        let mut pacer = Pacer::new(1000);
        assert_eq!(pacer.record(10, start), Duration::from_millis(10));
        let later = start + Duration::from_secs(60);
        // After a minute idle, only MAX_IDLE_CREDIT (20 ms = 20 bytes) is free.
        assert_eq!(pacer.record(20, later), Duration::ZERO);
        assert_eq!(pacer.record(20, later), Duration::from_millis(20));
    }

    #[test]
    fn late_wakeups_are_made_up() {
        let start = Instant::now();
        let mut pacer = Pacer::new(1000);
        let wait = pacer.record(10, start);
        assert_eq!(wait, Duration::from_millis(10));
        // Woke 5 ms late: the next 10 bytes are due 5 ms after that.
        let now = start + Duration::from_millis(15);
        assert_eq!(pacer.record(10, now), Duration::from_millis(5));
    }
}
