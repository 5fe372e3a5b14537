//! moria-runtime: fibers on the `may` engine, with every engine trap guarded.
//!
//! Write plain blocking code — `accept`, `read`, `write`, `recv` — in fibers; each wait parks the
//! fiber and its worker runs the others. No `may` type appears in this API, so the engine stays
//! replaceable.
//!
//! | module | what lives there |
//! |---|---|
//! | [`config`] | `Runtime::builder()`: workers, stack size (bytes), stack pool, offload threads, env vars; applied once |
//! | [`fiber`] | `spawn`, `JoinHandle`, `yield_now`, `sleep` (resumes on a worker), `current()`, `trim_stack` (deep stack pages given back before a long wait), `wait_trimmed` (a long wait holding only the pages its frames use) |
//! | [`scope`](mod@scope) | `scope` and `Scope::spawn`: fibers that borrow, joined before return |
//! | [`local`] | `fiber_local!`: per-fiber values (never `thread_local!` in fiber code) |
//! | [`blocking`](mod@blocking) | `blocking(f)` / `blocking_io(f)`: the offload pool for files, DNS, SQLite |
//! | [`sync`] | `Mutex`, `RwLock`, `Condvar`, `Semaphore`, `Event`, `WaitGroup`, channels, `PerWorker` |
//! | [`net`] | `TcpListener`, `TcpStream` (+ `split`, `read_within`: a coarse deadline, no timer), `UdpSocket`, `UnixListener`, `UnixStream`, `ParkingLot` (serve when readable) |
//! | [`time`] | `Deadline`: every blocking call has a timed form; expiry is `ErrorKind::TimedOut` |
//! | [`shutdown`] | `ShutdownToken`, SIGINT/SIGTERM, `drain(deadline)` |
//! | [`log_file`] | `LogFile`: a log file reopened after `SIGHUP` (logrotate) |
//! | [`logger`] | `QueuedLogger`: `log` records to a writer thread through a bounded queue; never blocks a fiber |
//! | [`metrics`] | `Counter`, `Gauge`, `Histogram` (atomics), `register` a `Collect`or, `gather` a Prometheus/OpenMetrics scrape |
//! | [`stats`](mod@stats) | `stats()`: atomic counters with a `Display` table |
//! | `trace` (feature `tracing`) | `FiberRegistry`: `tracing` spans whose current span follows the fiber, not the thread |
//! | [`startup`] | `vm.max_map_count` check, `RLIMIT_NOFILE` raise |
//!
//! Inside, not public: `engine/` (the only files that name `may`: what the rest of the crate
//! takes from the engine, listed in its module docs), `counters` (the atomics [`stats()`] reads),
//! `overflow` (a stack overflow ends its fiber, never the process), `stack_trim` (deep stack
//! pages given back), `stack_sweep` (the pooled stacks' pages given back when the process goes
//! quiet), `coarse_timer` (the sweeper behind `read_within`), `wake_timer` (deadlines
//! for `accept` and readiness waits), `error`.
//!
//! # Rules for fiber code
//! - Never use `thread_local!` (or libraries that rely on it across a wait): a fiber may resume
//!   on another thread after any wait. Use [`fiber_local!`] instead.
//! - Never call blocking syscalls directly (files, DNS, `std::thread::sleep`, blocking clients):
//!   wrap them in [`blocking()`](fn@blocking), or the worker and every socket it owns stall.
//! - One fiber waits on a socket at a time: the types enforce it (`&mut self`, `split`).
//! - Stack overflow: the guard page catches it, the engine prints `coroutine has overflowed
//!   its stack`, and `join()` returns a [`JoinError`] with `is_stack_overflow()`; the process
//!   goes on (the engine alone would exit with status 1 when the stack was used to its last
//!   word; `overflow.rs` prevents that) and [`stack_overflows()`] counts it. The fiber's frames
//!   are not unwound: its destructors never run, so what it owned leaks (memory, descriptors)
//!   and locks it held stay locked, and [`shutdown::drain`] is not woken by it. Servers must
//!   make per-fiber resources reclaimable without destructors (moria-http does); raise the
//!   stack (`Runtime::builder().stack_size(..)`, `MORIA_STACK_SIZE`; default 128 KiB) when it
//!   happens.
//! - Every wait has a timed form (`*_timeout`, socket timeouts, `accept_until`, `Deadline`)
//!   except taking a lock (critical sections are short: use `try_lock`, or a `Semaphore` whose
//!   `acquire_timeout` is timed) and `JoinHandle::join` (use `shutdown::drain(deadline)`).
//! - Timeouts: the engine keeps them in whole milliseconds and reads 0 as "none"; Moria rounds
//!   every timeout up to the next millisecond so a sub-millisecond wait cannot park forever.
#![warn(missing_docs)]

pub mod blocking;
mod coarse_timer;
pub mod config;
mod counters;
mod engine;
mod error;
pub mod fiber;
pub mod local;
pub mod log_file;
pub mod logger;
pub mod metrics;
pub mod net;
mod overflow;
pub mod scope;
pub mod shutdown;
mod stack_sweep;
mod stack_trim;
pub mod startup;
pub mod stats;
pub mod sync;
pub mod time;
#[cfg(feature = "tracing")]
pub mod trace;
mod wake_timer;

pub use blocking::{blocking, blocking_io};
pub use config::{Builder, Config, Runtime};
pub use engine::in_fiber;
pub use error::{panic_message, Error, Result};
pub use fiber::{current, sleep, spawn, yield_now, FiberInfo, JoinError, JoinHandle};
pub use overflow::stack_overflows;
pub use scope::{scope, Scope, ScopedJoinHandle};
pub use shutdown::ShutdownToken;
pub use stats::{stats, Stats};
pub use time::Deadline;
