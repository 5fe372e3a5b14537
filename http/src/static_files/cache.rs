//! The open-file cache (opt-in, like nginx's `open_file_cache`): small files on the fast path
//! stay open with their metadata for a while, so a hit skips `openat2`, `statx` and `close`
//! (about 14% of the server's CPU per request for a 1312-byte file; bench/README.md
//! "## fileserver"). An entry is trusted for the configured validity, then the path is opened
//! and checked again; a file changed in place within that window is served with its old
//! metadata, as nginx does. Only files on the fast path (local file system, root's device) of
//! at most [`SMALL_FILE_MAX`](super::SMALL_FILE_MAX) bytes are kept: their descriptor is only
//! ever read with `pread`, never moved, so one descriptor serves every request at once.

use std::collections::HashMap;
use std::fs;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::open::Stat;

/// Most entries kept; at the cap the oldest half is dropped.
pub const MAX_CACHED_FILES: usize = 1024;

/// One cached open file.
#[derive(Debug, Clone)]
struct Entry {
    file: Arc<fs::File>,
    stat: Stat,
    checked: Instant,
}

/// Open files by relative path. The lock is a std mutex held for a map operation only, never
/// across a wait, so fibers cannot deadlock on it.
#[derive(Debug)]
pub(crate) struct FileCache {
    valid_for: Duration,
    map: Mutex<HashMap<String, Entry>>,
}

impl FileCache {
    /// An empty cache whose entries are trusted for `valid_for`.
    pub(crate) fn new(valid_for: Duration) -> FileCache {
        FileCache {
            valid_for,
            map: Mutex::new(HashMap::new()),
        }
    }

    /// The open file and metadata for `rel`, if cached and still within its validity.
    pub(crate) fn get(&self, rel: &str) -> Option<(Arc<fs::File>, Stat)> {
        let map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        let e = map.get(rel)?;
        (e.checked.elapsed() < self.valid_for).then(|| (Arc::clone(&e.file), e.stat))
    }

    /// Keeps `file` for `rel` (the caller checked it is small and on the fast path).
    pub(crate) fn put(&self, rel: &str, file: Arc<fs::File>, stat: Stat) {
        let now = Instant::now();
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= MAX_CACHED_FILES && !map.contains_key(rel) {
            let mut ages: Vec<Instant> = map.values().map(|e| e.checked).collect();
            ages.sort_unstable();
            let cut = ages[ages.len() / 2];
            map.retain(|_, e| e.checked > cut);
        }
        map.insert(
            rel.to_string(),
            Entry {
                file,
                stat,
                checked: now,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::static_files::open::EntryKind;

    fn stat(size: u64) -> Stat {
        Stat {
            kind: EntryKind::File,
            size,
            mtime_secs: 1,
            mtime_nanos: 0,
            ino: 1,
            dev: 1,
        }
    }

    fn file() -> Arc<fs::File> {
        Arc::new(tempfile::tempfile().unwrap())
    }

    #[test]
    fn entries_expire_after_their_validity() {
        let c = FileCache::new(Duration::from_secs(60));
        assert!(c.get("a").is_none());
        c.put("a", file(), stat(5));
        assert_eq!(c.get("a").unwrap().1.size, 5);
        let expired = FileCache::new(Duration::ZERO);
        expired.put("a", file(), stat(5));
        assert!(expired.get("a").is_none());
    }

    #[test]
    fn the_cap_drops_the_oldest_half() {
        let c = FileCache::new(Duration::from_secs(60));
        for i in 0..MAX_CACHED_FILES + 1 {
            c.put(&i.to_string(), file(), stat(i as u64));
        }
        let len = c.map.lock().unwrap().len();
        assert!(len <= MAX_CACHED_FILES / 2 + 1, "{len}");
        assert!(c.get(&MAX_CACHED_FILES.to_string()).is_some());
        assert!(c.get("0").is_none());
    }
}
