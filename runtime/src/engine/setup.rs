//! Hands the validated configuration to the engine's scheduler (called once, by `config`).

/// Sets the engine's workers, default stack (given in bytes), stack pool and worker pinning.
pub(crate) fn configure(workers: usize, stack_bytes: usize, stack_pool: usize, pin_workers: bool) {
    let engine = may::config();
    engine.set_workers(workers);
    // The engine counts stack size in machine words; an even count keeps usage tracking off.
    engine.set_stack_size(stack_bytes / std::mem::size_of::<usize>());
    engine.set_pool_capacity(stack_pool);
    engine.set_worker_pin(pin_workers);
}
