//! What the fuzzers (fuzz_h1, fuzz_h2) share around their executions: panics recorded by a hook
//! instead of printed and turned into findings, findings' inputs saved, and a watchdog that ends
//! the run when one execution never ends.

use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The message of the last panic, recorded by the hook instead of printed.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);
/// The execution in progress, plus one (0 before the first).
pub static CURRENT: AtomicU64 = AtomicU64::new(0);

/// Records panics' messages for [`caught`] instead of printing them.
pub fn record_panics() {
    panic::set_hook(Box::new(|info| {
        if let Ok(mut m) = LAST_PANIC.lock() {
            *m = Some(info.to_string());
        }
    }));
}

/// Runs `f`, a panic in it becoming an error.
pub fn caught<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(_) => {
            let msg = LAST_PANIC.lock().ok().and_then(|mut m| m.take());
            Err(format!("panic: {}", msg.unwrap_or_default()))
        }
    }
}

/// Writes `input` to `out/name`; says where, or why not.
pub fn save(out: &Path, name: &str, input: &[u8]) -> String {
    let path = out.join(name);
    match std::fs::create_dir_all(out).and_then(|()| std::fs::write(&path, input)) {
        Ok(()) => path.display().to_string(),
        Err(e) => format!("(not saved: {e})"),
    }
}

/// Exits the process (status 3) when one execution (as [`CURRENT`] counts them) runs longer
/// than `limit`, after `on_hang` (given its index and how long it ran) saved and reported it.
pub fn watchdog(limit: Duration, on_hang: impl Fn(u64, Duration) + Send + 'static) {
    std::thread::spawn(move || {
        let mut last = 0;
        let mut since = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let now = CURRENT.load(Ordering::Relaxed);
            if now != last {
                last = now;
                since = Instant::now();
            } else if now > 0 && since.elapsed() >= limit {
                on_hang(now - 1, since.elapsed());
                std::process::exit(3);
            }
        }
    });
}
