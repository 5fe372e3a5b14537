//! moria-orm's integration tests in one binary: each module is one suite, against real SQLite
//! files and a real PostgreSQL (the shared `TestServer`, a fresh schema per test).
//!
//! Two suites keep a process of their own: `crash_batch` (it kills a child process mid-batch on
//! purpose, re-running its own binary as the child) and `db_offload_starvation` (it measures the
//! process-wide offload pool: its bound, and that it stays free while 64 writers wait, which
//! other suites' blocking jobs in the same process would disturb).

#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod batch_atomicity;
mod crud_types;
mod db_fibers;
mod db_reentrancy;
mod json_io;
mod metrics_figures;
mod pg_client;
mod pg_faults;
mod pg_rows;
mod pg_shared;
mod query_injection;
mod rest_handler;
mod rest_http;
mod schema_evolution;
mod tx_rollback;
