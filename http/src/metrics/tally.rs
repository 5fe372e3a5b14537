//! Request metrics recorded per batch: the answers a connection writes together (the requests
//! of one read, pipelined or not) are counted locally as they are answered and added to the
//! shared counters and histograms once, just before the batch is written, with one clock read
//! at its first request and one at the write. A pipelined request then costs a few plain adds
//! instead of a clock read and four atomic adds; a scrape still sees the answers of a batch
//! before their client does (but for answers flushed early within a batch: past 64 KiB of
//! answers, or before a file; those are added at the batch's end). Each request of a batch is timed from the batch's first head: its answer leaves
//! with the others, so that is the wait its client sees (and HTTP/1.1 answers in order).

use std::sync::Arc;
use std::time::Duration;

use moria_runtime::time::monotonic_nanos;

use super::routes::{unrouted, RouteStat};
use crate::counters::Counters;
use crate::method::Method;

/// The requests answered in the batch being written, by route, method and status.
#[derive(Default)]
pub(crate) struct Tally {
    /// When the batch's first request head was parsed ([`monotonic_nanos`]), if one was.
    started: Option<u64>,
    /// The answers of the batch's last route, method and status (nearly always all of them).
    last: Option<Pending>,
    /// The answers of the others, in the rare batch that mixes them.
    earlier: Vec<Pending>,
}

/// Answers of one route, method and status in the batch.
struct Pending {
    route: Option<Arc<RouteStat>>,
    method: Method,
    status: u16,
    n: u64,
}

impl Tally {
    /// Notes that a request head was parsed: the batch's clock starts at its first one.
    #[inline]
    pub(crate) fn start(&mut self) {
        if self.started.is_none() {
            self.started = Some(monotonic_nanos());
        }
    }

    /// Counts one answered request (`route`: the route it matched, if any).
    #[inline(always)]
    pub(crate) fn count(&mut self, route: Option<Arc<RouteStat>>, method: Method, status: u16) {
        if let Some(last) = &mut self.last {
            let same_route = match (&last.route, &route) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            };
            if same_route && last.method == method && last.status == status {
                last.n += 1;
                return;
            }
        }
        let fresh = Pending {
            route,
            method,
            status,
            n: 1,
        };
        if let Some(other) = self.last.replace(fresh) {
            self.earlier.push(other);
        }
    }

    /// The batch's answers are about to be written (or never will be): adds them to
    /// `counters` and to their duration histograms, each timed from the batch's first request
    /// head to now.
    #[inline]
    pub(crate) fn commit(&mut self, counters: &Counters) {
        if let Some(last) = self.last.take() {
            self.commit_batch(last, counters);
        }
    }

    #[inline(never)]
    fn commit_batch(&mut self, last: Pending, counters: &Counters) {
        let started = self.started.take().unwrap_or_else(monotonic_nanos);
        let took = Duration::from_nanos(monotonic_nanos().saturating_sub(started));
        for p in self.earlier.drain(..) {
            p.add_to(counters, took);
        }
        last.add_to(counters, took);
    }
}

impl Pending {
    /// Adds these answers to the shared figures.
    fn add_to(self, counters: &Counters, took: Duration) {
        counters.requests(self.method, self.status, self.n);
        match self.route {
            Some(route) => route.observe_n(took, self.n),
            None => unrouted(self.method).observe_n(took, self.n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_adds_each_route_and_status_once_committed() {
        let a = RouteStat::register("GET", "/tally-test/a");
        let b = RouteStat::register("GET", "/tally-test/b");
        let counters = Counters::default();
        let mut t = Tally::default();
        for (route, status) in [(&a, 200), (&a, 200), (&b, 200), (&a, 404), (&a, 200)] {
            t.start();
            t.count(Some(Arc::clone(route)), Method::Get, status);
        }
        assert_eq!(a.durations().count, 0, "nothing shared before the commit");
        t.commit(&counters);
        assert_eq!(a.durations().count, 4);
        assert_eq!(b.durations().count, 1);
        let get = &counters.requests[0];
        assert_eq!(get[1].load(std::sync::atomic::Ordering::Relaxed), 4);
        assert_eq!(get[3].load(std::sync::atomic::Ordering::Relaxed), 1);
        t.commit(&counters);
        assert_eq!(a.durations().count, 4, "a second commit adds nothing");
    }
}
