//! The runtime's counters: plain atomics bumped on the hot paths (fibers, offload pool, parked
//! sockets), importing nothing, so every layer can count and [`stats`](crate::stats) reads them.

use std::sync::atomic::AtomicU64;

/// Fibers spawned since start.
pub(crate) static FIBERS_SPAWNED: AtomicU64 = AtomicU64::new(0);
/// Fibers whose body ended (unwinding included) or that never started; an overflowed fiber
/// never gets here.
pub(crate) static FIBERS_FINISHED: AtomicU64 = AtomicU64::new(0);
/// Offload jobs queued and not yet taken by a thread.
pub(crate) static BLOCKING_QUEUED: AtomicU64 = AtomicU64::new(0);
/// Offload jobs running now.
pub(crate) static BLOCKING_RUNNING: AtomicU64 = AtomicU64::new(0);
/// Offload jobs finished since start.
pub(crate) static BLOCKING_DONE: AtomicU64 = AtomicU64::new(0);
/// Offload pool threads alive now.
pub(crate) static BLOCKING_THREADS: AtomicU64 = AtomicU64::new(0);
/// Sockets waiting in a `ParkingLot` now.
pub(crate) static SOCKETS_PARKED: AtomicU64 = AtomicU64::new(0);
