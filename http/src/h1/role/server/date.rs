//! The `Date` header value, formatted at most once per second for the whole process and shared
//! between workers through a seqlock of atomics (no `unsafe`, no thread-locals, no data race).

use std::sync::atomic::{fence, AtomicU64, Ordering};

use crate::http_date::format;

/// Length of an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
pub(crate) const DATE_LEN: usize = crate::http_date::LEN;

/// The process-wide cache: a sequence number (odd while being written), the second it holds,
/// and the 29 bytes packed in four words.
struct Shared {
    seq: AtomicU64,
    secs: AtomicU64,
    words: [AtomicU64; 4],
}

static SHARED: Shared = Shared {
    seq: AtomicU64::new(0),
    secs: AtomicU64::new(u64::MAX),
    words: [
        AtomicU64::new(0),
        AtomicU64::new(0),
        AtomicU64::new(0),
        AtomicU64::new(0),
    ],
};

/// A connection's copy of the date, refreshed from the shared cache when the second changes.
#[derive(Debug, Clone)]
pub(crate) struct DateCache {
    secs: u64,
    bytes: [u8; DATE_LEN],
}

impl Default for DateCache {
    fn default() -> Self {
        DateCache {
            secs: u64::MAX,
            bytes: [b' '; DATE_LEN],
        }
    }
}

/// Seconds since the epoch now (the coarse clock: a `Date` has one-second resolution).
pub(crate) fn now_secs() -> u64 {
    moria_runtime::time::coarse_unix_secs()
}

impl DateCache {
    /// The date for `secs` (normally [`now_secs`]).
    pub(crate) fn get(&mut self, secs: u64) -> &[u8; DATE_LEN] {
        if self.secs != secs {
            self.bytes = shared_date(secs);
            self.secs = secs;
        }
        &self.bytes
    }
}

/// The date now, from the shared cache (a stream of an HTTP/2 connection, which has no
/// [`DateCache`] of its own, formats it once per second with everyone else).
pub(crate) fn current_date() -> [u8; DATE_LEN] {
    shared_date(now_secs())
}

/// The date for `secs` from the shared cache, formatting and publishing it if it is stale.
fn shared_date(secs: u64) -> [u8; DATE_LEN] {
    if let Some(b) = read_shared(secs) {
        return b;
    }
    let b = format(secs);
    publish(secs, &b);
    b
}

fn read_shared(secs: u64) -> Option<[u8; DATE_LEN]> {
    let s1 = SHARED.seq.load(Ordering::Acquire);
    if s1 & 1 == 1 {
        return None;
    }
    let held = SHARED.secs.load(Ordering::Relaxed);
    let words: [u64; 4] = std::array::from_fn(|i| SHARED.words[i].load(Ordering::Relaxed));
    fence(Ordering::Acquire);
    if SHARED.seq.load(Ordering::Relaxed) != s1 || held != secs {
        return None;
    }
    Some(unpack(words))
}

fn publish(secs: u64, b: &[u8; DATE_LEN]) {
    let s = SHARED.seq.load(Ordering::Relaxed);
    if s & 1 == 1
        || SHARED
            .seq
            .compare_exchange(s, s + 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return; // another worker is publishing; ours stays local
    }
    fence(Ordering::Release);
    for (slot, w) in SHARED.words.iter().zip(pack(b)) {
        slot.store(w, Ordering::Relaxed);
    }
    SHARED.secs.store(secs, Ordering::Relaxed);
    SHARED.seq.store(s + 2, Ordering::Release);
}

fn pack(b: &[u8; DATE_LEN]) -> [u64; 4] {
    let mut padded = [0u8; 32];
    padded[..DATE_LEN].copy_from_slice(b);
    std::array::from_fn(|i| {
        u64::from_le_bytes(padded[i * 8..i * 8 + 8].try_into().unwrap_or_default())
    })
}

fn unpack(words: [u64; 4]) -> [u8; DATE_LEN] {
    let mut padded = [0u8; 32];
    for (i, w) in words.iter().enumerate() {
        padded[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    let mut out = [0u8; DATE_LEN];
    out.copy_from_slice(&padded[..DATE_LEN]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_imf_fixdate() {
        assert_eq!(&format(784111777), b"Sun, 06 Nov 1994 08:49:37 GMT");
    }

    #[test]
    fn pack_round_trips() {
        let b = format(1_700_000_000);
        assert_eq!(unpack(pack(&b)), b);
    }

    #[test]
    fn connection_cache_follows_the_second() {
        let mut c = DateCache::default();
        assert_eq!(c.get(784111777), b"Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(c.get(784111778), b"Sun, 06 Nov 1994 08:49:38 GMT");
    }

    #[test]
    fn threads_agree_on_the_shared_value() {
        let secs = now_secs();
        let handles: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || (0..1000).map(|_| shared_date(secs)).collect::<Vec<_>>())
            })
            .collect();
        let expected = format(secs);
        for h in handles {
            for b in h.join().unwrap() {
                assert_eq!(b, expected);
            }
        }
    }
}
