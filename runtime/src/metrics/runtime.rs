//! The runtime's metrics: fibers, stacks, the offload pool, parked sockets and workers, read from
//! [`stats()`](crate::stats()).

use super::Exposition;

/// Writes the runtime's families.
pub(super) fn collect(out: &mut Exposition) {
    let s = crate::stats();
    let counters: [(&'static str, &str, u64); 6] = [
        (
            "moria_fibers_spawned",
            "Fibers spawned since start.",
            s.fibers_spawned,
        ),
        (
            "moria_fibers_finished",
            "Fibers finished since start.",
            s.fibers_finished,
        ),
        (
            "moria_stack_overflows",
            "Fibers ended by a stack overflow.",
            s.stack_overflows,
        ),
        (
            "moria_offload_jobs_done",
            "Offload pool jobs finished.",
            s.blocking_done,
        ),
        (
            "moria_stack_trimmed_bytes",
            "Fiber stack bytes given back to the kernel.",
            s.stack_bytes_trimmed,
        ),
        (
            "moria_stack_sweeps",
            "Sweeps that gave back the pooled stacks' pages once quiet.",
            s.stack_sweeps,
        ),
    ];
    for (name, help, v) in counters {
        out.counter(name, help).value(&[], v);
    }
    let gauges: [(&'static str, &str, u64); 9] = [
        ("moria_fibers_live", "Fibers alive now.", s.fibers_live),
        (
            "moria_stacks_in_use",
            "Fiber stacks in use now (one per live fiber).",
            s.fibers_live,
        ),
        (
            "moria_stack_pool_size",
            "Fiber stacks the pool keeps for reuse.",
            s.stack_pool,
        ),
        (
            "moria_stack_size_bytes",
            "Size of one fiber stack.",
            s.stack_size,
        ),
        (
            "moria_offload_queue_length",
            "Offload jobs waiting for a thread.",
            s.blocking_queued,
        ),
        (
            "moria_offload_running",
            "Offload jobs running now.",
            s.blocking_running,
        ),
        (
            "moria_offload_threads",
            "Offload pool threads alive now.",
            s.blocking_threads,
        ),
        (
            "moria_sockets_parked",
            "Sockets waiting without a fiber.",
            s.sockets_parked,
        ),
        ("moria_workers", "Scheduler worker threads.", s.workers),
    ];
    for (name, help, v) in gauges {
        out.gauge(name, help).value(&[], v);
    }
}
