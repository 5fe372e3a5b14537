//! A server's live event counters: plain relaxed atomics, bumped by whichever layer sees the
//! event (accepting, the TLS handshake, dispatch, the transport), read as one snapshot by
//! `server::stats` and by the metrics collector.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::method::Method;

/// Request methods counted apart, in [`Method`]'s order (`OTHER` last).
pub(crate) const METHODS: [Method; 10] = [
    Method::Get,
    Method::Head,
    Method::Post,
    Method::Put,
    Method::Delete,
    Method::Options,
    Method::Patch,
    Method::Trace,
    Method::Connect,
    Method::Other,
];
/// Status classes counted apart: `1xx` to `5xx`.
pub(crate) const STATUS_CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];
/// Why a TLS handshake failed, as the metrics label it.
pub(crate) const TLS_FAILURES: [&str; 4] = ["timeout", "closed", "protocol", "shutdown"];

/// The live counters behind [`ServerStats`](crate::ServerStats) and the server's metrics.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) accepted: AtomicU64,
    pub(crate) refused: AtomicU64,
    pub(crate) handler_panics: AtomicU64,
    pub(crate) body_panics: AtomicU64,
    pub(crate) tls_handoffs: AtomicU64,
    pub(crate) tls_handshakes: AtomicU64,
    /// Failed handshakes by [`TLS_FAILURES`] reason.
    pub(crate) tls_failures: [AtomicU64; TLS_FAILURES.len()],
    /// Answered requests by [`METHODS`] index and [`STATUS_CLASSES`] index.
    pub(crate) requests: [[AtomicU64; STATUS_CLASSES.len()]; METHODS.len()],
    /// Bytes read from connections (plaintext under TLS).
    pub(crate) bytes_in: AtomicU64,
    /// Bytes written to connections (plaintext under TLS), files sent included.
    pub(crate) bytes_out: AtomicU64,
}

impl Counters {
    /// Adds one to `counter`.
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Relaxed);
    }

    /// Counts one answered request.
    pub(crate) fn request(&self, method: Method, status: u16) {
        self.requests(method, status, 1);
    }

    /// Counts `n` answered requests of one method and status.
    pub(crate) fn requests(&self, method: Method, status: u16, n: u64) {
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.requests[method_index(method)][class].fetch_add(n, Relaxed);
    }

    /// Counts one failed TLS handshake (`shutdown`: the server stopped while it waited).
    pub(crate) fn tls_failed(&self, e: &io::Error, shutdown: bool) {
        let reason = match e.kind() {
            _ if shutdown => 3,
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => 0,
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => 1,
            _ => 2,
        };
        Self::bump(&self.tls_failures[reason]);
    }
}

/// `method`'s index in [`METHODS`].
pub(crate) fn method_index(method: Method) -> usize {
    METHODS
        .iter()
        .position(|&m| m == method)
        .unwrap_or(METHODS.len() - 1)
}
