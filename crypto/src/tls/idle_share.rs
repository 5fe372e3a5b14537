//! [`IdleShare`]: how many of an acceptor's recent TLS connections went idle, which decides
//! whether new ones prepare a handoff to Moria's record layer (`handoff.rs`).
//!
//! Preparing costs every handshake OpenSSL's key log lines (it formats each TLS 1.3 secret
//! byte by byte with `sprintf`, about 280,000 instructions per handshake, 9% of a resumed one;
//! no public OpenSSL 3.0 call gives the secrets otherwise), and only a connection that goes
//! idle earns it back (14 KiB less while it waits, 22% fewer instructions per later request).
//! A server whose clients send one request per connection (`Connection: close`, siege) then
//! pays for nothing it uses. So the acceptor keeps two contexts, alike but for the key log and
//! message callbacks, and gives a new connection the preparing one while at least
//! [`NOTE_FROM`] of the last ~[`WINDOW`] connections went idle. Either is always correct: a
//! session without its secrets stays with OpenSSL. The share starts full, so a server that
//! keeps its connections never sees the other context.

use std::sync::atomic::{AtomicU32, Ordering};

/// Fixed-point one.
const ONE: u32 = 1 << 16;
/// Connections a change in the pattern takes to move the share by about 63%.
pub(crate) const WINDOW: u32 = 16;
/// The share of connections going idle from which new ones prepare a handoff: one in four.
/// Preparing costs about 9% of a handshake; a connection that goes idle gives back 14 KiB and
/// about 7,000 instructions on each later request.
pub(crate) const NOTE_FROM: u32 = ONE / 4;

/// An exponentially weighted share of connections that went idle, shared by an acceptor's
/// clones.
#[derive(Debug)]
pub(crate) struct IdleShare(AtomicU32);

impl Default for IdleShare {
    fn default() -> IdleShare {
        IdleShare(AtomicU32::new(ONE))
    }
}

impl IdleShare {
    /// Whether a new connection should prepare a handoff.
    pub(crate) fn worth_noting(&self) -> bool {
        self.0.load(Ordering::Relaxed) >= NOTE_FROM
    }

    /// Counts a connection that ended (its OpenSSL session freed): `idle` if it ever went idle.
    pub(crate) fn record(&self, idle: bool) {
        let step = |share: u32| {
            Some(if idle {
                share + (ONE - share) / WINDOW
            } else {
                share - share / WINDOW
            })
        };
        // `step` always answers, so the update cannot fail.
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, step);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_follows_the_connections() {
        let share = IdleShare::default();
        assert!(share.worth_noting(), "starts by noting");
        let mut closed = 0;
        while share.worth_noting() {
            share.record(false);
            closed += 1;
        }
        assert!((20..=30).contains(&closed), "{closed} one-shot connections");
        for _ in 0..8 {
            share.record(true);
        }
        assert!(share.worth_noting(), "back after a few idle ones");
        // One in two idle stays above the line; one in eight falls below it.
        for i in 0..200 {
            share.record(i % 2 == 0);
        }
        assert!(share.worth_noting());
        for i in 0..200 {
            share.record(i % 8 == 0);
        }
        assert!(!share.worth_noting());
    }
}
