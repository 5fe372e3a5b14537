//! A server's live event counters: plain relaxed atomics, bumped by whichever layer sees the
//! event (accepting, the TLS handoff, dispatch), read as one snapshot by `server::stats`.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The live counters behind [`ServerStats`](crate::ServerStats).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) accepted: AtomicU64,
    pub(crate) refused: AtomicU64,
    pub(crate) handler_panics: AtomicU64,
    pub(crate) body_panics: AtomicU64,
    pub(crate) tls_handoffs: AtomicU64,
}

impl Counters {
    /// Adds one to `counter`.
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Relaxed);
    }
}
