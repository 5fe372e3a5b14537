//! The server: listeners (several addresses, optionally one SO_REUSEPORT listener per worker),
//! one fiber per connection, a connection cap (503 beyond it), and graceful shutdown.
//!
//! - `builder.rs`: [`ServerBuilder`] (options, validation, binding, start).
//! - `accept.rs`: the accept loop, the TLS handshake, serving a connection, parking it while
//!   idle and waking it.
//! - `refuse.rs`: the 503 answer to a client over the connection cap.
//! - `stats.rs`: [`ServerStats`], the server's counters.
//! - here: the running [`Server`] handle, the shutdown supervisor, and the reclaiming of
//!   connections whose fiber died of a stack overflow.

mod accept;
mod builder;
mod refuse;
mod stats;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use moria_runtime::net::ParkingLot;
use moria_runtime::sync::{Event, Semaphore};
use moria_runtime::ShutdownToken;

use accept::Connection;
pub use builder::ServerBuilder;
pub use stats::ServerStats;

use crate::counters::Counters;
use crate::dispatch::h1::{ConnConfig, Exchange};
use crate::h1::ConnPool;
use crate::handler::Handler;
use crate::metrics::ServerView;
use crate::tracker::Tracker;

/// Default `Server` header value.
pub const DEFAULT_SERVER_HEADER: &str = "moria";
/// After the grace period, how long to wait for aborted connections to wind down.
const ABORT_WAIT: Duration = Duration::from_secs(5);
/// How often the supervisor looks for connections whose fiber died without deregistering.
const RECLAIM_EVERY: Duration = Duration::from_secs(1);

/// What every connection of a server shares.
pub(super) struct Shared {
    cfg: ConnConfig,
    handler: Box<dyn Handler>,
    tracker: Arc<Tracker>,
    token: ShutdownToken,
    /// Connections cut when the grace period ran out (set before `done`).
    aborted: AtomicUsize,
    counters: Counters,
    /// Permits for refusals running at once (see `refuse.rs`).
    refusing: Semaphore,
    /// Idle keep-alive connections, waiting for their next request without a fiber.
    lot: ParkingLot<Connection>,
    /// Working states (buffers, parsed head, response) of connections being served.
    conns: ConnPool<Exchange>,
    /// Whether HTTP/2 is served (ALPN `h2`, or the preface on a plain connection).
    h2: bool,
    /// The streams parked on a zero HTTP/2 window, across connections, and their cap.
    h2_parked: Arc<crate::h2::Parked>,
    /// The server's label in metrics: its first bound address.
    label: String,
}

/// How a shutdown ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Connections still busy when the grace period ran out, whose I/O was cut.
    pub aborted: usize,
}

impl ShutdownReport {
    /// Whether every connection finished on its own within the grace period.
    pub fn is_graceful(&self) -> bool {
        self.aborted == 0
    }
}

/// A running server.
pub struct Server {
    addrs: Vec<SocketAddr>,
    token: ShutdownToken,
    done: Arc<Event>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("addrs", &self.addrs)
            .finish()
    }
}

impl Server {
    /// A builder with every default.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }

    /// The bound addresses, in the order they were configured (real ports after port 0).
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// The first bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addrs[0]
    }

    /// Connections currently open.
    pub fn connections(&self) -> usize {
        self.shared.tracker.live()
    }

    /// The server's counters since it started.
    pub fn stats(&self) -> ServerStats {
        self.shared.stats()
    }

    /// The token that stops this server.
    pub fn shutdown_token(&self) -> &ShutdownToken {
        &self.token
    }

    /// Stops accepting, closes idle connections, lets in-flight requests finish (up to the
    /// grace period, then aborts them), and returns when every connection is gone.
    pub fn shutdown(&self) -> ShutdownReport {
        self.token.trigger();
        self.wait()
    }

    /// Waits until the server has shut down (its token fired and connections drained).
    pub fn wait(&self) -> ShutdownReport {
        self.done.wait();
        self.report()
    }

    /// Like [`wait`](Self::wait), for at most `timeout`; `None` if the server still runs then.
    pub fn wait_timeout(&self, timeout: Duration) -> Option<ShutdownReport> {
        self.done.wait_timeout(timeout).then(|| self.report())
    }

    fn report(&self) -> ShutdownReport {
        ShutdownReport {
            aborted: self.shared.aborted.load(Ordering::Acquire),
        }
    }
}

impl ServerView for Shared {
    fn label(&self) -> &str {
        &self.label
    }

    fn counters(&self) -> &Counters {
        &self.counters
    }

    fn stats(&self) -> ServerStats {
        let mut stats = self.counters.snapshot(self.tracker.reclaimed());
        stats.parked = self.lot.parked() as u64;
        stats.parks = self.lot.parks() as u64;
        let (pooled, busy) = self.conns.counts();
        stats.pooled_states = pooled as u64;
        stats.busy_states = busy as u64;
        stats.ws_quiet = self.tracker.ws_quiet();
        stats
    }

    fn open(&self) -> u64 {
        self.tracker.live() as u64
    }
}

pub(super) fn supervise(shared: &Shared, grace: Duration, done: &Event) {
    while !shared.token.wait_timeout(RECLAIM_EVERY) {
        reclaim_abandoned(shared);
    }
    let tracker = &shared.tracker;
    log::info!("shutting down: {} connections open", tracker.live());
    reclaim_abandoned(shared);
    shared.lot.close();
    tracker.wake_idle();
    if !wait_reclaiming(shared, grace) {
        let busy = tracker.live();
        log::warn!("{busy} connections still busy after {grace:?}: aborting them");
        shared.aborted.store(busy, Ordering::Release);
        tracker.abort_all();
        wait_reclaiming(shared, ABORT_WAIT);
    }
    done.set();
}

/// Waits up to `d` for every connection to end, reclaiming dead fibers' connections meanwhile.
fn wait_reclaiming(shared: &Shared, d: Duration) -> bool {
    let deadline = std::time::Instant::now() + d;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if shared.tracker.wait_empty(left.min(RECLAIM_EVERY)) {
            return true;
        }
        reclaim_abandoned(shared);
        if left <= RECLAIM_EVERY {
            return shared.tracker.live() == 0;
        }
    }
}

/// Reclaims connections whose fiber died without unwinding; logs and counts each.
pub(super) fn reclaim_abandoned(shared: &Shared) -> usize {
    let reclaimed = shared.tracker.reclaim_abandoned();
    for r in &reclaimed {
        log::error!(
            "connection fiber died ({}) while serving {}: its socket was closed and its slot \
             freed{}",
            r.cause,
            r.route,
            if r.answered { ", 500 sent" } else { "" }
        );
    }
    reclaimed.len()
}
