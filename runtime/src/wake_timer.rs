//! A timer thread that wakes fibers parked on a socket's readiness when their deadline passes.
//!
//! The engine has per-socket read/write timeouts but none for `accept` or for raw readiness waits
//! (used by `write_with`, e.g. sendfile). Entries live in a min-heap on one OS thread; waking goes
//! through the engine's waker, which reschedules the fiber onto a worker (never runs it on this
//! thread). Cancelling is lazy: a finished wait drops its `Arc` and the entry is skipped.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};
use std::time::Instant;

use parking_lot::{Condvar, Mutex};

use crate::engine::io::WaitIoWaker;

/// One armed wake-up; dropping the guard disarms it.
pub(crate) struct Armed {
    entry: Arc<Entry>,
}

struct Entry {
    waker: WaitIoWaker,
    disarmed: AtomicBool,
}

struct Timers {
    heap: Mutex<BinaryHeap<Reverse<Slot>>>,
    changed: Condvar,
}

struct Slot {
    at: Instant,
    entry: Arc<Entry>,
}

impl PartialEq for Slot {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at
    }
}
impl Eq for Slot {}
impl PartialOrd for Slot {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Slot {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.at.cmp(&other.at)
    }
}

static TIMERS: Timers = Timers {
    heap: Mutex::new(BinaryHeap::new()),
    changed: Condvar::new(),
};
static START: Once = Once::new();

/// Wakes `waker`'s fiber at `at` unless the returned guard is dropped first.
pub(crate) fn arm(at: Instant, waker: WaitIoWaker) -> Armed {
    START.call_once(|| {
        std::thread::Builder::new()
            .name("moria-wake-timer".into())
            .spawn(run)
            .expect("cannot start the moria wake-timer thread");
    });
    let entry = Arc::new(Entry {
        waker,
        disarmed: AtomicBool::new(false),
    });
    let mut heap = TIMERS.heap.lock();
    let earliest = heap.peek().is_none_or(|Reverse(s)| at < s.at);
    heap.push(Reverse(Slot {
        at,
        entry: entry.clone(),
    }));
    drop(heap);
    if earliest {
        TIMERS.changed.notify_one();
    }
    Armed { entry }
}

impl Drop for Armed {
    fn drop(&mut self) {
        self.entry.disarmed.store(true, Ordering::Release);
    }
}

fn run() {
    let mut heap = TIMERS.heap.lock();
    loop {
        let now = Instant::now();
        while heap.peek().is_some_and(|Reverse(s)| s.at <= now) {
            if let Some(Reverse(slot)) = heap.pop() {
                if !slot.entry.disarmed.load(Ordering::Acquire) {
                    slot.entry.waker.wakeup();
                }
            }
        }
        match heap.peek().map(|Reverse(s)| s.at) {
            Some(at) => {
                TIMERS
                    .changed
                    .wait_for(&mut heap, at.saturating_duration_since(now));
            }
            None => TIMERS.changed.wait(&mut heap),
        }
    }
}
