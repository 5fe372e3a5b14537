//! The command line: every flag has a `MORIA_*` environment twin.

use clap::Parser;

/// PostgreSQL connections per worker when `--pool-size` is not given.
pub const POOL_PER_WORKER: usize = 4;
/// Shared PostgreSQL connections per worker when `--pipelined` is not given (measured on 2
/// cores: with one, `/queries` and `/updates` spent twice the system time waking up for
/// answers; bench/results/2026-12-01-tfb-database-rows.md).
pub const PIPELINED_PER_WORKER: usize = 4;
/// Requests pending on a shared connection before the next is used, with one worker (see
/// [`Args::shared_fill`]).
pub const SHARED_FILL: usize = 64;

/// Command-line flags.
#[derive(Parser, Debug)]
#[command(about = "TechEmpower Framework Benchmarks application on moria-http and moria-orm")]
pub struct Args {
    /// Database: a SQLite file, `:memory:`, or a `postgres://user:pass@host/db` URL.
    #[arg(long, env = "MORIA_DB", default_value = "techempower.db")]
    pub db: String,
    /// Address to serve on.
    #[arg(long, env = "MORIA_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Serve HTTP/1.1 only (no h2c by the HTTP/2 preface).
    #[arg(long, env = "MORIA_NO_H2")]
    pub no_h2: bool,
    /// Worker threads (default: one per CPU).
    #[arg(long, env = "MORIA_WORKERS")]
    pub workers: Option<usize>,
    /// PostgreSQL connections for work that needs one to itself (default: 4 per worker).
    #[arg(long, env = "MORIA_DB_POOL")]
    pub pool: Option<usize>,
    /// Shared PostgreSQL connections on which the statements of all requests are pipelined
    /// (default: 4 per worker).
    #[arg(long, env = "MORIA_DB_PIPELINED")]
    pub pipelined: Option<usize>,
    /// Create and fill the World and Fortune tables (replacing them), then exit.
    #[arg(long, env = "MORIA_INIT")]
    pub init: bool,
}

impl Args {
    /// The pool size: `--pool` or a size that suits `workers`.
    pub fn pool_size(&self, workers: usize) -> usize {
        self.pool.unwrap_or(workers.max(1) * POOL_PER_WORKER)
    }

    /// When the pool moves on to the next shared connection: with one worker, once the first
    /// has [`SHARED_FILL`] requests pending (`/db` keeps to one socket in big batches, `/queries`
    /// spreads); with several, always the least busy, since a socket's waiters are woken on
    /// the worker that owns it (the `Db` by-one ×64 row: fill-first 0.77–0.80 of
    /// tokio-postgres, least busy 1.03–1.06, bench/README.md).
    pub fn shared_fill(workers: usize) -> usize {
        if workers <= 1 {
            SHARED_FILL
        } else {
            0
        }
    }

    /// The shared connections: `--pipelined` or a number that suits `workers`.
    pub fn pipelined(&self, workers: usize) -> usize {
        self.pipelined
            .unwrap_or(workers.max(1) * PIPELINED_PER_WORKER)
    }
}
