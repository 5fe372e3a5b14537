//! The ORM's metrics: statements and their durations by backend (SQLite's from its profile
//! hook, PostgreSQL's around each statement), PostgreSQL pool waits and timeouts, requests
//! queued on shared PostgreSQL connections, SQLite busy errors. Process-wide atomics; the
//! collector joins moria-runtime's registry when the first connection opens.

use std::sync::atomic::{AtomicI64, Ordering::Relaxed};
use std::time::Duration;

use moria_runtime::metrics::{self, Collect, Counter, Exposition, Histogram};

use crate::conn::Backend;

/// Backends in label order.
const BACKENDS: [(Backend, &str); 2] =
    [(Backend::Sqlite, "sqlite"), (Backend::Postgres, "postgres")];

static STATEMENTS: [Counter; 2] = [const { Counter::new() }; 2];
static DURATIONS: [Histogram; 2] = [const { Histogram::new() }; 2];
/// `Pool::acquire` calls that found no free connection and waited.
pub(crate) static POOL_WAITS: Counter = Counter::new();
/// `Pool::acquire` calls that waited in vain.
pub(crate) static POOL_TIMEOUTS: Counter = Counter::new();
/// Requests queued or in flight on shared PostgreSQL connections, all together.
pub(crate) static PG_SHARED_QUEUED: AtomicI64 = AtomicI64::new(0);
/// SQLite calls that failed with `SQLITE_BUSY` (or `SQLITE_LOCKED`).
pub(crate) static SQLITE_BUSY: Counter = Counter::new();

struct OrmCollector;

static ORM: OrmCollector = OrmCollector;

fn index(b: Backend) -> usize {
    usize::from(b == Backend::Postgres)
}

/// Adds the ORM's collector to the registry (idempotent; at each connection open).
pub(crate) fn register() {
    metrics::register(&ORM);
}

/// Records one statement on `backend` that took `d`.
pub(crate) fn statement(backend: Backend, d: Duration) {
    STATEMENTS[index(backend)].inc();
    DURATIONS[index(backend)].observe(d);
}

impl Collect for OrmCollector {
    fn collect(&self, out: &mut Exposition) {
        let mut f = out.counter("moria_orm_statements", "Statements run, by backend.");
        for (b, name) in BACKENDS {
            f.value(&[("backend", name)], STATEMENTS[index(b)].get());
        }
        let mut f = out.histogram(
            "moria_orm_statement_duration_seconds",
            "Statement durations, by backend.",
        );
        for (b, name) in BACKENDS {
            f.observed(&[("backend", name)], &DURATIONS[index(b)].snapshot());
        }
        let counters: [(&'static str, &str, &Counter); 3] = [
            (
                "moria_orm_pool_waits",
                "PostgreSQL pool checkouts that had to wait.",
                &POOL_WAITS,
            ),
            (
                "moria_orm_pool_timeouts",
                "PostgreSQL pool checkouts that timed out.",
                &POOL_TIMEOUTS,
            ),
            (
                "moria_orm_sqlite_busy",
                "SQLite calls that failed busy or locked.",
                &SQLITE_BUSY,
            ),
        ];
        for (name, help, c) in counters {
            out.counter(name, help).value(&[], c.get());
        }
        out.gauge(
            "moria_orm_pg_shared_queue_depth",
            "Requests queued or in flight on shared PostgreSQL connections.",
        )
        .value(&[], PG_SHARED_QUEUED.load(Relaxed).max(0));
    }
}
