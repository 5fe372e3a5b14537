//! Request durations per route pattern: each route a [`Router`](crate::Router) defines owns a
//! [`RouteStat`] (its method, its pattern, a fixed-bucket histogram); a request that matched it
//! carries the stat, so recording is a few atomic adds. Requests that matched no route are
//! recorded per method under the route label `unmatched`.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use moria_runtime::metrics::{Exposition, Histogram};

use crate::counters::{method_index, METHODS};
use crate::method::Method;

/// One routed `(method, pattern)` and its request duration histogram.
#[derive(Debug)]
pub struct RouteStat {
    method: String,
    pattern: String,
    durations: Histogram,
}

/// Every live route's stat (routers hold the strong references).
static ROUTES: Mutex<Vec<Weak<RouteStat>>> = Mutex::new(Vec::new());
/// Durations of requests no route matched, per method.
static UNROUTED: [Histogram; METHODS.len()] = [const { Histogram::new() }; METHODS.len()];

/// The route label of requests that no route matched.
const UNMATCHED: &str = "unmatched";

impl RouteStat {
    /// The stat for `method` requests on `pattern`, listed for scrapes while it lives; routers
    /// that define the same route share one (one series per label set).
    pub(crate) fn register(method: &str, pattern: &str) -> Arc<RouteStat> {
        let mut all = ROUTES.lock().unwrap_or_else(|e| e.into_inner());
        all.retain(|w| w.strong_count() > 0);
        let same = |r: &&Arc<RouteStat>| r.method == method && r.pattern == pattern;
        if let Some(stat) = all.iter().filter_map(Weak::upgrade).find(|r| same(&r)) {
            return stat;
        }
        let stat = Arc::new(RouteStat {
            method: method.to_string(),
            pattern: pattern.to_string(),
            durations: Histogram::new(),
        });
        all.push(Arc::downgrade(&stat));
        stat
    }

    /// The pattern as the route was defined (`/users/:id`).
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Records one request's duration.
    pub(crate) fn observe(&self, d: Duration) {
        self.durations.observe(d);
    }

    /// The durations recorded so far.
    #[cfg(test)]
    pub(crate) fn durations(&self) -> moria_runtime::metrics::HistogramSnapshot {
        self.durations.snapshot()
    }

    /// Records `n` requests of duration `d`.
    pub(crate) fn observe_n(&self, d: Duration, n: u64) {
        self.durations.observe_n(d, n);
    }
}

/// The histogram of `method` requests no route matched.
pub(crate) fn unrouted(method: Method) -> &'static Histogram {
    &UNROUTED[method_index(method)]
}

/// Writes the duration family: every live route, then the unmatched requests per method.
pub(super) fn collect(out: &mut Exposition) {
    let routes: Vec<Arc<RouteStat>> = ROUTES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    let mut family = out.histogram(
        "moria_http_request_duration_seconds",
        "Time from a parsed request head to its response written, by route pattern.",
    );
    for r in &routes {
        let labels = [("method", r.method.as_str()), ("route", r.pattern.as_str())];
        family.observed(&labels, &r.durations.snapshot());
    }
    for (m, h) in METHODS.iter().zip(&UNROUTED) {
        let s = h.snapshot();
        if s.count > 0 {
            family.observed(&[("method", m.as_str()), ("route", UNMATCHED)], &s);
        }
    }
}
