//! `stats()`: the runtime's counters and configuration read as one snapshot, with a `Display` table.

use std::fmt;
use std::sync::atomic::Ordering::Relaxed;

use crate::counters::{
    BLOCKING_DONE, BLOCKING_QUEUED, BLOCKING_RUNNING, BLOCKING_THREADS, FIBERS_FINISHED,
    FIBERS_SPAWNED, SOCKETS_PARKED,
};

/// A snapshot of the runtime's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Fibers spawned since start.
    pub fibers_spawned: u64,
    /// Fibers alive now (spawned and not finished).
    pub fibers_live: u64,
    /// Fibers finished since start (stack overflows included).
    pub fibers_finished: u64,
    /// Fibers that died of a stack overflow since start (their frames were abandoned).
    pub stack_overflows: u64,
    /// Offload jobs waiting for a thread.
    pub blocking_queued: u64,
    /// Offload jobs running now.
    pub blocking_running: u64,
    /// Offload jobs finished since start.
    pub blocking_done: u64,
    /// Offload pool threads alive now.
    pub blocking_threads: u64,
    /// Sockets waiting in a `ParkingLot` now (no fiber, no buffers).
    pub sockets_parked: u64,
    /// Scheduler workers (0 before start).
    pub workers: u64,
    /// Fiber stack size in bytes (0 before start).
    pub stack_size: u64,
    /// Pooled stack capacity (0 before start).
    pub stack_pool: u64,
    /// Bytes of fiber stacks given back to the kernel since start (their deep part, after a
    /// fiber went deep on them).
    pub stack_bytes_trimmed: u64,
    /// Sweeps since start that gave back the pooled stacks' pages once the process went quiet
    /// after a burst of fibers.
    pub stack_sweeps: u64,
}

/// Reads every counter (a few relaxed atomic loads).
pub fn stats() -> Stats {
    let spawned = FIBERS_SPAWNED.load(Relaxed);
    let overflows = crate::overflow::stack_overflows();
    // An overflowed fiber never runs its finish guard.
    let finished = FIBERS_FINISHED.load(Relaxed) + overflows;
    let config = crate::config::current_config();
    Stats {
        fibers_spawned: spawned,
        fibers_live: spawned.saturating_sub(finished),
        fibers_finished: finished,
        stack_overflows: overflows,
        blocking_queued: BLOCKING_QUEUED.load(Relaxed),
        blocking_running: BLOCKING_RUNNING.load(Relaxed),
        blocking_done: BLOCKING_DONE.load(Relaxed),
        blocking_threads: BLOCKING_THREADS.load(Relaxed),
        sockets_parked: SOCKETS_PARKED.load(Relaxed),
        workers: config.as_ref().map_or(0, |c| c.workers as u64),
        stack_size: config.as_ref().map_or(0, |c| c.stack_size as u64),
        stack_pool: config.as_ref().map_or(0, |c| c.stack_pool as u64),
        stack_bytes_trimmed: crate::stack_trim::trimmed_bytes(),
        stack_sweeps: crate::stack_sweep::sweeps(),
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rows: [(&str, u64); 14] = [
            ("fibers spawned", self.fibers_spawned),
            ("fibers live", self.fibers_live),
            ("fibers finished", self.fibers_finished),
            ("stack overflows", self.stack_overflows),
            ("blocking queued", self.blocking_queued),
            ("blocking running", self.blocking_running),
            ("blocking done", self.blocking_done),
            ("blocking threads", self.blocking_threads),
            ("sockets parked", self.sockets_parked),
            ("workers", self.workers),
            ("stack size (bytes)", self.stack_size),
            ("stack pool", self.stack_pool),
            ("stack bytes trimmed", self.stack_bytes_trimmed),
            ("stack sweeps", self.stack_sweeps),
        ];
        for (name, value) in rows {
            writeln!(f, "{name:<20} {value:>12}")?;
        }
        Ok(())
    }
}
