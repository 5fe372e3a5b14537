//! Shutdown: a token fibers can check or wait on, signal handling, and draining fibers.
//!
//! A [`ShutdownToken`] is a cloneable flag. Accept loops take one
//! (`TcpListener::accept_until`) and stop when it fires, because triggering wakes every listener
//! registered with it. [`global()`] is the process-wide token that [`listen_for_signals`] connects
//! to SIGINT and SIGTERM (a second signal exits at once). [`drain`] waits for every other fiber
//! to finish, up to a deadline.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex as StdMutex, OnceLock, PoisonError};
use std::time::Duration;

use crate::sync::{Condvar, Event, Mutex, Reset};
use crate::time::Deadline;
use crate::{engine, stats};

type Callback = Box<dyn Fn() + Send + Sync>;

struct Inner {
    triggered: AtomicBool,
    event: Event,
    callbacks: StdMutex<Vec<(u64, Callback)>>,
    next_id: AtomicU64,
}

/// A cloneable shutdown flag; every clone sees the same state.
#[derive(Clone)]
pub struct ShutdownToken {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ShutdownToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShutdownToken")
            .field("triggered", &self.is_triggered())
            .finish()
    }
}

impl Default for ShutdownToken {
    fn default() -> Self {
        Self::new()
    }
}

impl ShutdownToken {
    /// A new, untriggered token (independent of the global one).
    pub fn new() -> Self {
        ShutdownToken {
            inner: Arc::new(Inner {
                triggered: AtomicBool::new(false),
                event: Event::new(Reset::Manual),
                callbacks: StdMutex::new(Vec::new()),
                next_id: AtomicU64::new(0),
            }),
        }
    }

    /// Fires the token: wakes waiters and registered listeners. Idempotent.
    pub fn trigger(&self) {
        if self.inner.triggered.swap(true, Ordering::AcqRel) {
            return;
        }
        self.inner.event.set();
        let callbacks = self
            .inner
            .callbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (_, wake) in callbacks.iter() {
            wake();
        }
    }

    /// Whether the token has fired.
    pub fn is_triggered(&self) -> bool {
        self.inner.triggered.load(Ordering::Acquire)
    }

    /// Waits until the token fires.
    pub fn wait(&self) {
        self.inner.event.wait();
    }

    /// Waits at most `timeout`; returns whether the token fired.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        self.inner.event.wait_timeout(timeout)
    }

    /// Runs `wake` when the token fires (at once if it already has); returns an id for
    /// [`unregister`](Self::unregister).
    pub(crate) fn register(&self, wake: Callback) -> u64 {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let mut callbacks = self
            .inner
            .callbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if self.is_triggered() {
            wake();
        }
        callbacks.push((id, wake));
        id
    }

    /// Removes a callback added by [`register`](Self::register).
    pub(crate) fn unregister(&self, id: u64) {
        self.inner
            .callbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(i, _)| *i != id);
    }

    /// Whether two handles are clones of one token.
    pub fn same_as(&self, other: &ShutdownToken) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// The process-wide token, fired by [`listen_for_signals`] or by any code.
pub fn global() -> &'static ShutdownToken {
    static GLOBAL: OnceLock<ShutdownToken> = OnceLock::new();
    GLOBAL.get_or_init(ShutdownToken::new)
}

/// Fires the global token on the first SIGINT or SIGTERM; a second one exits with status 130.
pub fn listen_for_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("moria-signals".into())
        .spawn(move || {
            let mut seen = 0;
            for signal in signals.forever() {
                seen += 1;
                if seen > 1 {
                    log::warn!("second signal {signal}: exiting now");
                    std::process::exit(130);
                }
                log::info!("signal {signal}: shutting down");
                global().trigger();
            }
        })?;
    Ok(())
}

/// Drain waiters present, so fiber exits know whether to notify.
static DRAINERS: AtomicUsize = AtomicUsize::new(0);

fn drain_lock() -> &'static (Mutex<()>, Condvar) {
    static LOCK: OnceLock<(Mutex<()>, Condvar)> = OnceLock::new();
    LOCK.get_or_init(|| (Mutex::new(()), Condvar::new()))
}

/// Called by every finishing fiber: wakes drainers (one atomic load when there are none).
pub(crate) fn fiber_finished() {
    if DRAINERS.load(Ordering::Acquire) > 0 {
        let (lock, cond) = drain_lock();
        let _g = lock.lock();
        cond.notify_all();
    }
}

/// Fibers still running after a [`drain`] deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{remaining} fibers still running at the drain deadline")]
pub struct DrainTimeout {
    /// How many fibers were still alive.
    pub remaining: u64,
}

/// Waits until every fiber other than the caller has finished, or `deadline` passes.
pub fn drain(deadline: Deadline) -> Result<(), DrainTimeout> {
    let own = u64::from(engine::in_fiber());
    let others = || stats::stats().fibers_live.saturating_sub(own);
    DRAINERS.fetch_add(1, Ordering::AcqRel);
    let (lock, cond) = drain_lock();
    let mut guard = lock.lock();
    let timed_out = cond.wait_while_until(&mut guard, deadline, |_| others() > 0);
    drop(guard);
    DRAINERS.fetch_sub(1, Ordering::AcqRel);
    match timed_out {
        true => Err(DrainTimeout {
            remaining: others(),
        }),
        false => Ok(()),
    }
}
