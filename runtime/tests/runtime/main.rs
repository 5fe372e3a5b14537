//! moria-runtime's integration tests in one binary, a module per file; helpers in `common/`.
//!
//! Four tests keep a binary of their own, each saying why in its header: `config_once.rs`
//! (sets an environment variable; its builds must be the process's first), `trap_stack.rs` (a
//! stack configuration of its own; counts the process's memory maps), `shutdown_drain.rs`
//! (`drain` waits for every fiber in the process) and `net_ten_thousand_sockets.rs` (10,000
//! descriptors and both workers at once). Every test here configures the runtime the
//! same way (`workers(2)`, defaults otherwise): the engine takes one configuration per process.

mod common;
mod fiber_api;
mod net_park;
mod net_resolve_offload;
mod net_tcp;
mod net_udp_unix;
mod shutdown_token;
mod stack_trim;
mod sync_channels;
mod sync_primitives;
mod trap_blocking_offload;
mod trap_stack_overflow;
mod trap_timer_thread;
