//! The recording side of metrics: [`Counter`], [`Gauge`] and a fixed-bucket [`Histogram`], each
//! a few relaxed atomics that record without a lock or an allocation.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// A count that only goes up.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    /// A counter at zero.
    pub const fn new() -> Counter {
        Counter(AtomicU64::new(0))
    }

    /// Adds one.
    pub fn inc(&self) {
        self.0.fetch_add(1, Relaxed);
    }

    /// Adds `n`.
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Relaxed);
    }

    /// The count now.
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// A value that goes up and down.
#[derive(Debug, Default)]
pub struct Gauge(AtomicI64);

impl Gauge {
    /// A gauge at zero.
    pub const fn new() -> Gauge {
        Gauge(AtomicI64::new(0))
    }

    /// Adds one.
    pub fn inc(&self) {
        self.0.fetch_add(1, Relaxed);
    }

    /// Takes one away.
    pub fn dec(&self) {
        self.0.fetch_sub(1, Relaxed);
    }

    /// Sets the value.
    pub fn set(&self, v: i64) {
        self.0.store(v, Relaxed);
    }

    /// The value now.
    pub fn get(&self) -> i64 {
        self.0.load(Relaxed)
    }
}

/// Upper bounds of [`Histogram`]'s buckets in microseconds (100 µs to 10 s; `+Inf` follows):
/// Prometheus' default bounds with the sub-millisecond ones a fiber server needs.
pub const BUCKETS_MICROS: [u64; 14] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 10_000_000,
];

/// A duration histogram with the fixed [`BUCKETS_MICROS`] bounds: one atomic per bucket, a sum
/// and a count.
#[derive(Debug, Default)]
pub struct Histogram {
    /// Observations per bucket (not cumulative; the last is `+Inf`).
    buckets: [AtomicU64; BUCKETS_MICROS.len() + 1],
    sum_micros: AtomicU64,
    count: AtomicU64,
}

/// A consistent-enough copy of a [`Histogram`] (each field read once, relaxed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistogramSnapshot {
    /// Cumulative observations at or below each bound of [`BUCKETS_MICROS`], then `+Inf`.
    pub cumulative: [u64; BUCKETS_MICROS.len() + 1],
    /// Sum of every observation in microseconds.
    pub sum_micros: u64,
    /// Observations.
    pub count: u64,
}

impl Histogram {
    /// An empty histogram.
    pub const fn new() -> Histogram {
        Histogram {
            buckets: [const { AtomicU64::new(0) }; BUCKETS_MICROS.len() + 1],
            sum_micros: AtomicU64::new(0),
            count: AtomicU64::new(0),
        }
    }

    /// Records one observation of `d`.
    pub fn observe(&self, d: Duration) {
        self.observe_n(d, 1);
    }

    /// Records `n` observations of `d` (a batch timed once) with one add per field.
    pub fn observe_n(&self, d: Duration, n: u64) {
        let micros = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        // The first bound at or above `micros` (`BUCKETS_MICROS.len()`: `+Inf`), by bisection.
        let i = BUCKETS_MICROS.partition_point(|&b| b < micros);
        self.buckets[i].fetch_add(n, Relaxed);
        self.sum_micros.fetch_add(micros.saturating_mul(n), Relaxed);
        self.count.fetch_add(n, Relaxed);
    }

    /// Reads the histogram, buckets made cumulative. The count is the `+Inf` bucket's, so the
    /// two always agree in an exposition even while observations land.
    pub fn snapshot(&self) -> HistogramSnapshot {
        let mut s = HistogramSnapshot::default();
        let mut total = 0;
        for (out, b) in s.cumulative.iter_mut().zip(&self.buckets) {
            total += b.load(Relaxed);
            *out = total;
        }
        s.sum_micros = self.sum_micros.load(Relaxed);
        s.count = total;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_their_bucket_and_accumulate() {
        let h = Histogram::new();
        h.observe(Duration::from_micros(100));
        h.observe(Duration::from_micros(101));
        h.observe(Duration::from_secs(60));
        let s = h.snapshot();
        assert_eq!(s.cumulative[0], 1);
        assert_eq!(s.cumulative[1], 2);
        assert_eq!(s.cumulative[BUCKETS_MICROS.len() - 1], 2);
        assert_eq!(s.cumulative[BUCKETS_MICROS.len()], 3);
        assert_eq!(s.count, 3);
        assert_eq!(s.sum_micros, 60_000_201);
    }

    #[test]
    fn a_batch_counts_as_its_observations() {
        let h = Histogram::new();
        h.observe_n(Duration::from_micros(300), 4);
        let s = h.snapshot();
        assert_eq!(s.cumulative[1], 0);
        assert_eq!(s.cumulative[2], 4);
        assert_eq!(s.count, 4);
        assert_eq!(s.sum_micros, 1_200);
    }
}
