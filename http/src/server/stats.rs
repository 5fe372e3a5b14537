//! A server's counters: plain relaxed atomics bumped where things happen, read as one snapshot.

use std::fmt;
use std::sync::atomic::Ordering::Relaxed;

use crate::counters::Counters;

/// A snapshot of a server's counters since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Connections accepted and served.
    pub accepted: u64,
    /// Connections refused at the connection cap (answered 503, or closed when even the
    /// refusals are at their limit).
    pub refused: u64,
    /// Handlers that panicked (answered 500).
    pub handler_panics: u64,
    /// Response bodies (streams, readers) that panicked after their head was sent (the
    /// connection was closed).
    pub body_panics: u64,
    /// Connections whose fiber died without unwinding (a stack overflow) and were reclaimed:
    /// socket closed, slot freed, 500 sent where no response had started.
    pub reclaimed: u64,
    /// Idle keep-alive connections parked now: no fiber, no buffers.
    pub parked: u64,
    /// Times idle keep-alive connections parked since the server started (a connection
    /// counts once per park): beside `parked`, how often connections go idle and come back.
    pub parks: u64,
    /// Connection working states (buffers, parsed head, response) pooled for reuse now.
    pub pooled_states: u64,
    /// Connection working states in use now: held by connections while they are served
    /// (never by a waiting or parked one).
    pub busy_states: u64,
    /// TLS 1.3 sessions handed from OpenSSL to moria-crypto's own record layer, at their first
    /// idle or (HTTP/2) after their handshake (OpenSSL's session object freed; see
    /// moria-crypto's README, "TLS 1.3 records after the handshake").
    pub tls_handoffs: u64,
    /// WebSocket waits between messages that went quiet (nothing came within
    /// `ws::Config::quiet_after`): buffers and deep stack pages given back, taken again when
    /// the next message comes.
    pub ws_quiet: u64,
}

impl fmt::Display for ServerStats {
    /// One `name value` line per counter, aligned like moria-runtime's `Stats` table.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rows: [(&str, u64); 11] = [
            ("accepted", self.accepted),
            ("refused", self.refused),
            ("handler panics", self.handler_panics),
            ("body panics", self.body_panics),
            ("reclaimed", self.reclaimed),
            ("parked", self.parked),
            ("parks", self.parks),
            ("pooled states", self.pooled_states),
            ("busy states", self.busy_states),
            ("TLS handoffs", self.tls_handoffs),
            ("WebSocket quiet", self.ws_quiet),
        ];
        for (name, value) in rows {
            writeln!(f, "{name:<20} {value:>12}")?;
        }
        Ok(())
    }
}

impl Counters {
    /// Reads every counter; `reclaimed` is the tracker's (the gauges, `parks` and `ws_quiet`
    /// are left at zero).
    pub(crate) fn snapshot(&self, reclaimed: u64) -> ServerStats {
        ServerStats {
            accepted: self.accepted.load(Relaxed),
            refused: self.refused.load(Relaxed),
            handler_panics: self.handler_panics.load(Relaxed),
            body_panics: self.body_panics.load(Relaxed),
            reclaimed,
            parked: 0,
            parks: 0,
            pooled_states: 0,
            busy_states: 0,
            tls_handoffs: self.tls_handoffs.load(Relaxed),
            ws_quiet: 0,
        }
    }
}
