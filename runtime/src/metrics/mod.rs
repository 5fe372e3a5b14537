//! Metrics for Prometheus: recording instruments ([`Counter`], [`Gauge`], [`Histogram`]: relaxed
//! atomics, no lock, no allocation), the exposition text ([`Exposition`], Prometheus 0.0.4 or
//! OpenMetrics 1.0), and the registry every crate adds its [`Collect`]or to, so a `/metrics`
//! handler gathers all of them without importing upward.
//!
//! - `instruments.rs`: the instruments and the fixed histogram bounds.
//! - `exposition.rs`: [`Format`] (negotiated from `Accept`), [`Exposition`], [`Family`].
//! - `runtime.rs`: the runtime's own collector ([`stats()`](crate::stats()) as metrics).
//! - here: [`register`] and [`gather`].
//!
//! Written here rather than taken from `prometheus-client` or `metrics`: the former's histograms
//! and labelled families take a lock to record, the latter's recorders look handles up by key
//! (hashing, and a registry lock on first use) and its Prometheus exporter pulls tokio.

mod exposition;
mod instruments;
mod runtime;

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

pub use exposition::{Exposition, Family, Format};
pub use instruments::{Counter, Gauge, Histogram, HistogramSnapshot, BUCKETS_MICROS};

/// Something that writes metric families into a scrape. Each family name must come from one
/// collector only (a family's samples are written together).
pub trait Collect: Send + Sync {
    /// Writes this collector's families.
    fn collect(&self, out: &mut Exposition);
}

/// Collectors in registration order (the runtime's comes first, unregistered).
static COLLECTORS: Mutex<Vec<&'static dyn Collect>> = Mutex::new(Vec::new());

/// Bytes reserved for the first scrape's text; later ones reserve the last one's size and an
/// eighth, so a scrape's text is one allocation.
const SCRAPE_CAPACITY: usize = 16 * 1024;
/// The length of the last scrape's text.
static LAST_SCRAPE: AtomicUsize = AtomicUsize::new(0);

/// Adds `c` to every later [`gather`] (once: registering the same collector again does nothing).
pub fn register(c: &'static dyn Collect) {
    let mut all = COLLECTORS.lock().unwrap_or_else(|e| e.into_inner());
    if !all.iter().any(|x| std::ptr::addr_eq(*x, c)) {
        all.push(c);
    }
}

/// One scrape: the runtime's metrics, then every registered collector's, in `format`.
pub fn gather(format: Format) -> String {
    let last = LAST_SCRAPE.load(Relaxed);
    let mut out = Exposition::new(format, SCRAPE_CAPACITY.max(last + last / 8));
    runtime::collect(&mut out);
    let all = COLLECTORS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for c in all {
        c.collect(&mut out);
    }
    let text = out.finish();
    LAST_SCRAPE.store(text.len(), Relaxed);
    text
}
