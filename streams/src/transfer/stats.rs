//! Process-wide counters of the path each transfer took, so a test (or an operator) can tell a
//! zero-copy transfer from one that fell back to copying through a buffer.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Totals since the process started, by path. Each field is its own relaxed atomic: a snapshot
/// taken while transfers run may be mid-update across fields, never wrong within one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransferStats {
    /// Transfers that took the `sendfile(2)` path.
    pub sendfile_transfers: u64,
    /// Bytes moved by `sendfile(2)`.
    pub sendfile_bytes: u64,
    /// Transfers that took the `splice(2)` path.
    pub splice_transfers: u64,
    /// Bytes moved by `splice(2)` (counted once, on the way out of the kernel pipe).
    pub splice_bytes: u64,
    /// Buffered copies: [`super::transfer`] calls, direct or as `transfer_to`'s fallback.
    pub buffered_transfers: u64,
    /// Bytes moved through a user-space buffer by those copies.
    pub buffered_bytes: u64,
}

impl TransferStats {
    /// What happened between `earlier` and this snapshot.
    pub fn since(&self, earlier: &TransferStats) -> TransferStats {
        TransferStats {
            sendfile_transfers: self.sendfile_transfers - earlier.sendfile_transfers,
            sendfile_bytes: self.sendfile_bytes - earlier.sendfile_bytes,
            splice_transfers: self.splice_transfers - earlier.splice_transfers,
            splice_bytes: self.splice_bytes - earlier.splice_bytes,
            buffered_transfers: self.buffered_transfers - earlier.buffered_transfers,
            buffered_bytes: self.buffered_bytes - earlier.buffered_bytes,
        }
    }
}

/// The two counters of one path: one relaxed increment per transfer and one per chunk moved,
/// next to a syscall (or a 64 KiB copy) that costs far more.
pub(super) struct PathCounter {
    transfers: AtomicU64,
    bytes: AtomicU64,
}

impl PathCounter {
    const fn new() -> PathCounter {
        PathCounter {
            transfers: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    /// Counts one transfer taking this path.
    pub(super) fn begin(&self) {
        self.transfers.fetch_add(1, Relaxed);
    }

    /// Counts `n` bytes moved along this path.
    pub(super) fn moved(&self, n: usize) {
        self.bytes.fetch_add(n as u64, Relaxed);
    }
}

/// The `sendfile(2)` path.
pub(super) static SENDFILE: PathCounter = PathCounter::new();
/// The `splice(2)` path.
pub(super) static SPLICE: PathCounter = PathCounter::new();
/// The buffered copy.
pub(super) static BUFFERED: PathCounter = PathCounter::new();

/// A snapshot of the counters.
pub fn transfer_stats() -> TransferStats {
    TransferStats {
        sendfile_transfers: SENDFILE.transfers.load(Relaxed),
        sendfile_bytes: SENDFILE.bytes.load(Relaxed),
        splice_transfers: SPLICE.transfers.load(Relaxed),
        splice_bytes: SPLICE.bytes.load(Relaxed),
        buffered_transfers: BUFFERED.transfers.load(Relaxed),
        buffered_bytes: BUFFERED.bytes.load(Relaxed),
    }
}
