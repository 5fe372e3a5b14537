//! The one gate to the engine: every entry point calls `ensure()` before touching `may`.

use std::sync::atomic::{AtomicBool, Ordering};

static CONFIGURED: AtomicBool = AtomicBool::new(false);

/// Makes sure a configuration is applied before the engine starts (defaults otherwise).
#[inline]
pub(crate) fn ensure() {
    if !CONFIGURED.load(Ordering::Acquire) {
        crate::config::ensure_applied();
    }
}

/// Records that the configuration is in force.
pub(crate) fn mark_configured() {
    CONFIGURED.store(true, Ordering::Release);
}

/// Whether the caller runs inside a fiber (as opposed to a plain OS thread).
#[inline]
pub fn in_fiber() -> bool {
    may::coroutine::is_coroutine()
}
