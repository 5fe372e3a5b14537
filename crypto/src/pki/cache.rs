//! The verification cache: successful verifications by certificate fingerprint and purpose,
//! each kept until the earliest expiry in its chain (or of a CRL used).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use super::Purpose;

/// Most entries kept; the cache is emptied when it is full.
pub const MAX_CACHE_ENTRIES: usize = 10_000;

/// Successful verifications. A std mutex on purpose: it is held only for a map operation,
/// never across OpenSSL calls or I/O, so a fiber never parks while holding it.
#[derive(Default)]
pub(crate) struct VerifyCache {
    entries: Mutex<HashMap<([u8; 32], Purpose), SystemTime>>,
}

impl VerifyCache {
    /// Whether `fingerprint` was verified for `purpose` and is still valid at `now`.
    pub(crate) fn hit(&self, fingerprint: &[u8; 32], purpose: Purpose, now: SystemTime) -> bool {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(&(*fingerprint, purpose))
            .is_some_and(|until| now < *until)
    }

    /// Remembers a successful verification, valid until `until`.
    pub(crate) fn put(&self, fingerprint: [u8; 32], purpose: Purpose, until: SystemTime) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= MAX_CACHE_ENTRIES {
            entries.clear();
        }
        entries.insert((fingerprint, purpose), until);
    }

    /// How many entries are kept.
    pub(crate) fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn entries_expire_and_are_bounded() {
        let cache = VerifyCache::default();
        let now = SystemTime::now();
        cache.put([1; 32], Purpose::Any, now + Duration::from_secs(10));
        assert!(cache.hit(&[1; 32], Purpose::Any, now));
        assert!(!cache.hit(&[1; 32], Purpose::TlsServer, now));
        assert!(!cache.hit(&[1; 32], Purpose::Any, now + Duration::from_secs(10)));
        for i in 0..MAX_CACHE_ENTRIES {
            let mut fp = [0; 32];
            fp[..8].copy_from_slice(&(i as u64).to_le_bytes());
            cache.put(fp, Purpose::Any, now);
        }
        assert!(cache.len() <= MAX_CACHE_ENTRIES);
    }
}
