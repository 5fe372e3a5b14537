//! [`Bench`]: the options, fresh database files, the insert modes and engines, and the median
//! of an insert over fresh databases.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use moria_orm::Mode;

use crate::report::{median, rate};

#[derive(Parser, Debug)]
#[command(about = "mORMot 2 extdb-bench on moria-orm")]
pub(crate) struct Args {
    /// Rows per test (mORMot: 10000).
    #[arg(long, default_value_t = 10_000)]
    pub(crate) rows: usize,
    /// Rows for Direct inserts with synchronous=FULL (mORMot: 200).
    #[arg(long, default_value_t = 200)]
    pub(crate) full_direct_rows: usize,
    /// Runs per figure; the median is printed.
    #[arg(long, default_value_t = 5)]
    pub(crate) runs: usize,
    /// Directory for the database files.
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
    /// Skip the fiber-side Db rows.
    #[arg(long)]
    pub(crate) no_db: bool,
    /// Skip the REST rows.
    #[arg(long)]
    pub(crate) no_rest: bool,
    /// Only measure this machine's cross-thread wake-up cost (std threads, no Moria code).
    #[arg(long)]
    pub(crate) baseline: bool,
    /// Only these engines (full, off, exc, memory); default all.
    #[arg(long, value_delimiter = ',')]
    pub(crate) engines: Vec<String>,
    /// Only compare batch statement shapes (rows per INSERT, bound ids or not), in memory.
    #[arg(long)]
    pub(crate) shapes: bool,
    /// Only compare `Db` dispatches on by-one reads from fibers (1 and 8 concurrent fibers).
    #[arg(long)]
    pub(crate) dispatch: bool,
    /// Only the PostgreSQL comparison: moria-orm over Unix socket and TCP beside tokio-postgres,
    /// and the concurrent by-one column (64 fibers) on both backends. Starts a throwaway server
    /// unless `--pg-url` names one.
    #[arg(long)]
    pub(crate) pg: bool,
    /// Only the PostgreSQL "All" column (one select of every row), like for like, with the CPU
    /// time per 1,000 rows of this process and of the server backend: `Db::list` and
    /// tokio-postgres models, `SharedClient::query` and tokio-postgres rows, in turn.
    #[arg(long)]
    pub(crate) pg_all: bool,
    /// PostgreSQL server for `--pg` (its `Sample` table is dropped and recreated).
    #[arg(long)]
    pub(crate) pg_url: Option<String>,
    /// Pool size of the PostgreSQL `Db` (and connections of the tokio-postgres peer).
    #[arg(long, default_value_t = 8)]
    pub(crate) pg_pool: usize,
    /// Shared (pipelined) connections of the PostgreSQL `Db`, on top of the pool.
    #[arg(long, default_value_t = moria_orm::pg::DEFAULT_PIPELINED)]
    pub(crate) pg_pipelined: usize,
    /// Scheduler workers of the runtime the `Db` rows run on (the tokio-postgres peer runs on
    /// one thread).
    #[arg(long, default_value_t = 2)]
    pub(crate) workers: usize,
}

/// How rows are inserted: mORMot's four insert columns.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Insert {
    Direct,
    Batch,
    Trans,
    BatchTrans,
}

/// Every insert mode, in the table's column order.
pub(crate) const INSERTS: [Insert; 4] = [
    Insert::Direct,
    Insert::Batch,
    Insert::Trans,
    Insert::BatchTrans,
];

/// The SQLite engines: `--engines` key, row label, mode.
pub(crate) const ENGINES: [(&str, &str, Mode); 4] = [
    ("full", "Sqlite file full", Mode::Full),
    ("off", "Sqlite file off", Mode::Off),
    ("exc", "Sqlite file off exc", Mode::OffExclusive),
    ("memory", "Sqlite in memory", Mode::Memory),
];

/// One run of the bench: its options and the database files it made.
pub(crate) struct Bench {
    pub(crate) args: Args,
    pub(crate) dir: PathBuf,
    pub(crate) serial: usize,
}

impl Bench {
    /// A fresh database path (memory databases ignore it).
    pub(crate) fn fresh(&mut self, mode: Mode) -> PathBuf {
        self.serial += 1;
        let p = self.dir.join(format!("orm-bench-{}.db", self.serial));
        if mode.is_file() {
            for ext in ["", "-wal", "-shm", "-journal"] {
                let _ = std::fs::remove_file(format!("{}{ext}", p.display()));
            }
        }
        p
    }

    pub(crate) fn rows_for(&self, mode: Mode, ins: Insert) -> usize {
        if mode == Mode::Full && ins == Insert::Direct {
            self.args.full_direct_rows.min(self.args.rows)
        } else {
            self.args.rows
        }
    }

    /// Median insert rate of `f` over fresh databases.
    pub(crate) fn insert_median(
        &mut self,
        mode: Mode,
        ins: Insert,
        mut f: impl FnMut(&Path, usize) -> (Duration, usize),
    ) -> u64 {
        let rows = self.rows_for(mode, ins);
        let runs: Vec<u64> = (0..self.args.runs)
            .map(|_| {
                let path = self.fresh(mode);
                let (d, n) = f(&path, rows);
                assert_eq!(n, rows);
                rate(rows, d)
            })
            .collect();
        median(runs)
    }
}

/// Fibers (and tokio tasks) of the concurrent by-one column.
pub(crate) const CONCURRENT: usize = 64;
