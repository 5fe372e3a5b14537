//! Fibers: spawn, join, scope, yield, sleep, and who am I.
//!
//! Spawning never sets a per-fiber stack size, so every fiber takes a pooled stack of the size
//! configured in `Runtime::builder()` (the engine only pools its default size).

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::time::Duration;

use crate::config::{self, Runtime};
use crate::counters::{FIBERS_FINISHED, FIBERS_SPAWNED};
use crate::engine::{self, coroutine};
use crate::error::panic_message;
use crate::shutdown;

/// Counts a fiber as finished when dropped, even when the fiber unwinds.
struct FinishGuard;

impl Drop for FinishGuard {
    fn drop(&mut self) {
        let ended = FIBERS_FINISHED.fetch_add(1, SeqCst) + 1;
        crate::stack_sweep::fiber_finished(ended);
        shutdown::fiber_finished();
    }
}

/// Wraps a fiber body so the counters see its start and end.
fn counted<F, T>(f: F) -> impl FnOnce() -> T
where
    F: FnOnce() -> T,
{
    FIBERS_SPAWNED.fetch_add(1, Relaxed);
    move || {
        crate::overflow::install_once();
        let _guard = FinishGuard;
        crate::stack_trim::run(f)
    }
}

/// Why a fiber produced no value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", if *.stack_overflow { format!("fiber overflowed its stack: {message}") } else { format!("fiber panicked: {message}") })]
pub struct JoinError {
    message: String,
    stack_overflow: bool,
}

impl JoinError {
    pub(crate) fn from_message(message: String) -> Self {
        JoinError {
            message,
            stack_overflow: false,
        }
    }

    /// Builds the error from a fiber's panic payload, recognising the engine's overflow marker.
    fn from_payload(payload: &(dyn std::any::Any + Send)) -> Self {
        match payload.downcast_ref::<generator::Error>() {
            Some(generator::Error::StackErr) => JoinError {
                message: format!(
                    "its frames were abandoned without unwinding (locks it held stay locked); \
                     raise the stack size (Runtime::builder().stack_size, MORIA_STACK_SIZE; \
                     now {} bytes)",
                    config::current_config().map_or(0, |c| c.stack_size)
                ),
                stack_overflow: true,
            },
            _ => JoinError::from_message(panic_message(payload)),
        }
    }

    /// Whether the fiber died of a stack overflow (caught by the guard page).
    pub fn is_stack_overflow(&self) -> bool {
        self.stack_overflow
    }

    /// The panic message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Owns a running fiber; `join` waits for its value. Dropping it detaches the fiber.
pub struct JoinHandle<T> {
    inner: coroutine::JoinHandle<T>,
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("finished", &self.inner.is_done())
            .finish()
    }
}

impl<T> JoinHandle<T> {
    /// Waits for the fiber; its panic comes back as an error.
    pub fn join(self) -> Result<T, JoinError> {
        self.inner
            .join()
            .map_err(|payload| JoinError::from_payload(&*payload))
    }

    /// Whether the fiber has finished.
    pub fn is_finished(&self) -> bool {
        self.inner.is_done()
    }
}

/// Configures one fiber before spawning it.
#[derive(Debug, Default)]
pub struct Builder {
    name: Option<String>,
}

impl Builder {
    /// A builder for an unnamed fiber.
    pub fn new() -> Self {
        Builder::default()
    }

    /// Names the fiber (shown by `current()` and in panic messages).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Spawns the fiber; running out of stacks (memory maps) is an error, not a panic.
    pub fn spawn<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        config::ensure();
        let mut builder = coroutine::Builder::new();
        if let Some(name) = self.name {
            builder = builder.name(name);
        }
        let body = counted(f);
        // The engine panics when it cannot map a stack; turn that into an error.
        // SAFETY: the engine marks spawn unsafe because fiber code can touch thread-local
        // storage across a yield and can overflow its stack. Moria forbids `thread_local!` in
        // fiber code (see the crate docs), offers fiber-local storage instead, and sizes
        // stacks through the validated builder; overflow is caught by the guard page.
        // From a fiber the child runs at once on this worker until its first wait (the parent
        // resumes then): no cross-thread wake-up, and a short child finishes before `spawn`
        // returns. From a plain thread it is queued on a worker.
        let in_fiber = engine::in_fiber();
        let spawned = catch_unwind(AssertUnwindSafe(|| unsafe {
            if in_fiber {
                builder.spawn_local(body)
            } else {
                builder.spawn(body)
            }
        }));
        match spawned {
            Ok(Ok(inner)) => Ok(JoinHandle { inner }),
            Ok(Err(e)) => {
                fiber_not_started();
                Err(e)
            }
            Err(payload) => {
                fiber_not_started();
                Err(std::io::Error::new(
                    std::io::ErrorKind::OutOfMemory,
                    format!(
                        "cannot create a fiber stack ({}); check vm.max_map_count",
                        panic_message(&*payload)
                    ),
                ))
            }
        }
    }
}

/// Undoes the spawn count of a fiber that never started.
fn fiber_not_started() {
    FIBERS_FINISHED.fetch_add(1, Relaxed);
}

/// Spawns a fiber running `f`. Panics only if no stack can be mapped (see `Builder::spawn`).
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    match Builder::new().spawn(f) {
        Ok(handle) => handle,
        Err(e) => panic!("moria: failed to spawn a fiber: {e}"),
    }
}

impl Runtime {
    /// Runs `f` in a fiber and waits for it: the usual body of `main`.
    pub fn run<F, T>(&self, f: F) -> Result<T, JoinError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        spawn(f).join()
    }
}

/// Gives back to the kernel the resident pages of the running fiber's stack below the caller's
/// frame, for a fiber about to wait long after having run deep (they read as zeroes when
/// touched again); returns the bytes given back (0 outside a fiber). A few system calls: call
/// it before a long wait, not on every one.
pub fn trim_stack() -> usize {
    crate::stack_trim::below_here()
}

/// Runs `wait`, a wait expected to last (a socket quiet for a while), with the running fiber's
/// stack given back to the kernel below the caller's frame, the stack's bottom page included,
/// so the fiber holds only the pages its frames and the wait occupy; when `wait` returns (or
/// unwinds) the engine's marker words at the bottom are written back. A few system calls and
/// page faults: for long waits, not every wait. Outside a fiber it only runs `wait`.
pub fn wait_trimmed<T>(wait: impl FnOnce() -> T) -> T {
    let _trimmed = crate::stack_trim::all_below_here();
    wait()
}

/// Lets other fibers run; from a plain thread it yields the thread.
#[inline]
pub fn yield_now() {
    if engine::in_fiber() {
        coroutine::yield_now();
    } else {
        std::thread::yield_now();
    }
}

/// Puts the caller to sleep for `d`; a fiber resumes on a worker, not on the timer thread.
pub fn sleep(d: Duration) {
    if engine::in_fiber() {
        coroutine::sleep(d);
        engine::resume_on_worker();
    } else {
        std::thread::sleep(d);
    }
}

/// Identity of the running fiber (or plain thread).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FiberInfo {
    /// Unique for the process's lifetime; plain threads get ids too.
    pub id: u64,
    /// The name given at spawn, or the thread's name outside fibers.
    pub name: Option<String>,
    /// Whether the caller is a fiber.
    pub is_fiber: bool,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

crate::fiber_local! {
    static FIBER_ID: u64 = NEXT_ID.fetch_add(1, Relaxed);
}

/// Who is running: id, name and whether it is a fiber.
pub fn current() -> FiberInfo {
    let id = FIBER_ID.with(|id| *id);
    if engine::in_fiber() {
        FiberInfo {
            id,
            name: coroutine::current_name(),
            is_fiber: true,
        }
    } else {
        FiberInfo {
            id,
            name: std::thread::current().name().map(str::to_string),
            is_fiber: false,
        }
    }
}
