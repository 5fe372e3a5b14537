//! A fast CSPRNG: AES-128-CTR (AES-NI through OpenSSL's EVP) with fast key erasure, one
//! generator per thread with no lock, seeded from the OS, reseeded every 64 MiB and in a child
//! after `fork`.
//!
//! | file | job |
//! |---|---|
//! | `drbg` | the deterministic core: keystream, key erasure, buffer for small requests |
//! | `per_thread` | the thread's generator: OS seeding, byte budget, fork detection, fibers |
//! | `uniform` | integers below a bound without modulo bias |
//!
//! For session ids, nonces, JWT ids, WebSocket masks and anything else drawn per request.
//! Long-term keys may as well come from [`crate::random_bytes`] (OpenSSL's DRBG): they are
//! drawn rarely, and OpenSSL's generator is the one its own key generation uses.
//!
//! ```
//! let mut session_id = [0u8; 16];
//! moria_crypto::rng::fill(&mut session_id)?;
//! let die = moria_crypto::rng::range(1..7)?;
//! assert!((1..7).contains(&die));
//! # Ok::<(), moria_crypto::Error>(())
//! ```
//!
//! Every call may run on any thread, in any fiber: see `per_thread` for why migration between
//! calls is safe. Errors are only possible when the OS or OpenSSL fails (no entropy source,
//! no AES-CTR), or for an empty [`range`].

mod drbg;
mod per_thread;
mod uniform;

use std::ops::Range;

use crate::error::{Error, Result};

/// Fills `buf` with cryptographically secure random bytes.
pub fn fill(buf: &mut [u8]) -> Result<()> {
    per_thread::with(|d| d.fill(buf))
}

/// A cryptographically secure random `u32`.
pub fn u32() -> Result<u32> {
    per_thread::with(|d| d.take().map(u32::from_ne_bytes))
}

/// A cryptographically secure random `u64`.
pub fn u64() -> Result<u64> {
    per_thread::with(|d| d.take().map(u64::from_ne_bytes))
}

/// A uniform integer in `range` (no modulo bias); an empty range is an error.
pub fn range(range: Range<u64>) -> Result<u64> {
    let Some(span) = range.end.checked_sub(range.start).filter(|&s| s > 0) else {
        return Err(Error::InvalidInput {
            what: "random range",
            reason: format!("{}..{} is empty", range.start, range.end),
        });
    };
    let offset = match u32::try_from(span) {
        Ok(span) => per_thread::with(|d| {
            uniform::below_u32(span, || d.take().map(u32::from_ne_bytes)).map(u64::from)
        })?,
        Err(_) => {
            per_thread::with(|d| uniform::below_u64(span, || d.take().map(u64::from_ne_bytes)))?
        }
    };
    Ok(range.start + offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_stays_inside_and_reaches_both_ends() {
        let mut seen = [false; 6];
        for _ in 0..1000 {
            let x = range(10..16).unwrap();
            seen[usize::try_from(x - 10).unwrap()] = true;
        }
        assert_eq!(seen, [true; 6]);
        let wide = range(5..u64::MAX).unwrap();
        assert!(wide >= 5);
    }

    #[test]
    fn empty_range_is_an_error() {
        assert!(matches!(
            range(4..4),
            Err(Error::InvalidInput {
                what: "random range",
                ..
            })
        ));
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 5..4;
        assert!(range(reversed).is_err());
    }

    #[test]
    fn draws_differ() {
        assert_ne!(u64().unwrap(), u64().unwrap());
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        fill(&mut a).unwrap();
        fill(&mut b).unwrap();
        assert_ne!(a, b);
        fill(&mut []).unwrap();
    }
}
