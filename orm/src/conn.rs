//! [`Conn`]: one connection — SQLite or PostgreSQL — with every ORM operation on it.
//!
//! `Conn` is the synchronous core. A SQLite connection blocks on disk I/O, so fibers use it
//! through [`Db`](crate::Db), which runs it where blocking is harmless; a PostgreSQL
//! connection is fiber-native (its waits park only the calling fiber), so `Db` runs it on the
//! calling fiber with a connection from its pool.

use std::cell::{Cell, RefCell, RefMut};
use std::path::Path;
use std::time::Duration;

use rusqlite::trace::{TraceEvent, TraceEventCodes};
use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};
use crate::pg;

/// Durability and locking of a database, after mORMot's engine list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// File, `synchronous=FULL`: every commit is fsynced.
    Full,
    /// File, `synchronous=OFF`: no fsync; survives a process crash, not a power loss.
    #[default]
    Off,
    /// File, `synchronous=OFF` and `locking_mode=EXCLUSIVE`: one connection holds the file.
    OffExclusive,
    /// `:memory:`, the path is ignored.
    Memory,
}

impl Mode {
    /// Whether the database lives in a file.
    pub fn is_file(self) -> bool {
        self != Mode::Memory
    }
}

/// Default number of prepared statements kept per connection.
pub const DEFAULT_STATEMENT_CACHE: usize = 64;
/// Default `cache_size` in pages (mORMot's 10000 pages of 4 KiB, ~40 MB).
pub const DEFAULT_PAGE_CACHE: i64 = 10_000;
/// Default wait for a lock held by another connection.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Most `?` parameters one batch statement uses (mORMot: 500; SQLite allows 32766). 128–256 was
/// fastest in `cargo run --release -p moria-bench --bin orm -- --shapes`; longer statements
/// were slower.
pub const DEFAULT_BATCH_PARAMS: usize = 256;

/// Default most parameters per batch INSERT on PostgreSQL (the protocol allows 65535).
pub const DEFAULT_PG_BATCH_PARAMS: usize = 4096;

/// Settings for opening a connection (see [`DbBuilder`](crate::DbBuilder) for the fiber-side
/// ones).
#[derive(Clone, Debug)]
pub struct ConnOptions {
    /// Durability and locking. Default [`Mode::Off`].
    pub mode: Mode,
    /// Use the write-ahead log. Default false (SQLite's rollback journal, like mORMot).
    pub wal: bool,
    /// Prepared statements kept per connection. Default [`DEFAULT_STATEMENT_CACHE`].
    pub statement_cache: usize,
    /// `cache_size` in pages. Default [`DEFAULT_PAGE_CACHE`].
    pub page_cache: i64,
    /// Lock wait. Default [`DEFAULT_BUSY_TIMEOUT`].
    pub busy_timeout: Duration,
    /// Most parameters per batch INSERT, capped by SQLite's own limit. Default
    /// [`DEFAULT_BATCH_PARAMS`].
    pub batch_params: usize,
}

impl Default for ConnOptions {
    fn default() -> Self {
        ConnOptions {
            mode: Mode::Off,
            wal: false,
            statement_cache: DEFAULT_STATEMENT_CACHE,
            page_cache: DEFAULT_PAGE_CACHE,
            busy_timeout: DEFAULT_BUSY_TIMEOUT,
            batch_params: DEFAULT_BATCH_PARAMS,
        }
    }
}

impl ConnOptions {
    /// Options for `mode` with every other setting at its default.
    pub fn new(mode: Mode) -> Self {
        ConnOptions {
            mode,
            ..ConnOptions::default()
        }
    }

    /// Rejects combinations SQLite cannot honour.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.wal && self.mode == Mode::Memory {
            return Err(Error::Config("WAL needs a file database".into()));
        }
        if self.batch_params == 0 {
            return Err(Error::Config("batch_params must be at least 1".into()));
        }
        Ok(())
    }
}

/// Which database engine a connection talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// SQLite through rusqlite.
    Sqlite,
    /// PostgreSQL through [`pg`](crate::pg).
    Postgres,
}

/// A PostgreSQL connection owned by the `Conn` or borrowed from a pool.
// The pooled variant is kept inline: a `Db` call builds one per call, a box would cost an
// allocation each time.
#[allow(clippy::large_enum_variant)]
pub(crate) enum PgHandle {
    Owned(Box<pg::Client>),
    Pooled(pg::PooledClient),
    /// A `Db` call: single statements go through a shared, pipelined connection until the
    /// call first needs a connection to itself (a transaction, raw SQL, [`Conn::pg`]); from
    /// then on it uses one checked out of the pool.
    Shared {
        shared: pg::SharedClient,
        pool: pg::Pool,
        own: Option<pg::PooledClient>,
    },
}

impl PgHandle {
    /// The shared connection, while this call has none of its own.
    pub(crate) fn shared(&self) -> Option<&pg::SharedClient> {
        match self {
            PgHandle::Shared {
                shared, own: None, ..
            } => Some(shared),
            _ => None,
        }
    }

    /// A connection to itself, checked out of the pool on first need.
    pub(crate) fn client(&mut self) -> pg::Result<&mut pg::Client> {
        match self {
            PgHandle::Owned(c) => Ok(c),
            PgHandle::Pooled(c) => Ok(c),
            PgHandle::Shared { pool, own, .. } => match own {
                Some(c) => Ok(c),
                None => Ok(own.insert(pool.acquire()?)),
            },
        }
    }
}

#[allow(clippy::large_enum_variant)]
pub(crate) enum Engine {
    Sqlite(Connection),
    Pg(RefCell<PgHandle>),
}

/// One connection with the ORM's operations (CRUD, batch, transactions, JSON), on SQLite
/// ([`Conn::open`]) or PostgreSQL ([`Conn::connect`]).
pub struct Conn {
    pub(crate) engine: Engine,
    /// Open transaction levels: 0 none, 1 a transaction, more for savepoints.
    pub(crate) depth: Cell<u32>,
    pub(crate) batch_params: usize,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn")
            .field("backend", &self.backend())
            .field("depth", &self.depth.get())
            .finish()
    }
}

impl Conn {
    /// The one place that picks the engine: runs `sqlite` with the SQLite connection or `pg`
    /// with the PostgreSQL handle, handing `ctx` (state both sides use) to the one that runs.
    pub(crate) fn on_engine_with<'a, C, R>(
        &'a self,
        ctx: C,
        sqlite: impl FnOnce(&'a Connection, C) -> R,
        pg: impl FnOnce(&'a RefCell<PgHandle>, C) -> R,
    ) -> R {
        match &self.engine {
            Engine::Sqlite(db) => sqlite(db, ctx),
            Engine::Pg(handle) => pg(handle, ctx),
        }
    }

    /// [`Conn::on_engine_with`] without shared state.
    pub(crate) fn on_engine<'a, R>(
        &'a self,
        sqlite: impl FnOnce(&'a Connection) -> R,
        pg: impl FnOnce(&'a RefCell<PgHandle>) -> R,
    ) -> R {
        self.on_engine_with((), |db, ()| sqlite(db), |handle, ()| pg(handle))
    }

    /// Opens (creating if needed) the database at `path` in `mode`.
    pub fn open(path: impl AsRef<Path>, mode: Mode) -> Result<Self> {
        Self::open_with(path, &ConnOptions::new(mode))
    }

    /// Opens with full options.
    pub fn open_with(path: impl AsRef<Path>, opts: &ConnOptions) -> Result<Self> {
        opts.validate()?;
        let db = if opts.mode == Mode::Memory {
            Connection::open_in_memory()?
        } else {
            Connection::open(path)?
        };
        let conn = Self::setup(db, opts)?;
        let db = conn.sqlite_db();
        if opts.mode.is_file() {
            db.pragma_update(None, "page_size", 4096)?;
        }
        db.pragma_update(None, "cache_size", opts.page_cache)?;
        let sync = if opts.mode == Mode::Full {
            "FULL"
        } else {
            "OFF"
        };
        db.pragma_update(None, "synchronous", sync)?;
        if opts.mode == Mode::OffExclusive {
            db.pragma_update(None, "locking_mode", "EXCLUSIVE")?;
        }
        if opts.wal {
            let mode: String =
                db.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(Error::Config(format!("journal_mode=WAL refused ({mode})")));
            }
        }
        Ok(conn)
    }

    /// Opens a read-only connection to a WAL database, for a reader pool.
    pub(crate) fn open_reader(path: &Path, opts: &ConnOptions) -> Result<Self> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let db = Connection::open_with_flags(path, flags)?;
        let conn = Self::setup(db, opts)?;
        conn.sqlite_db()
            .pragma_update(None, "cache_size", opts.page_cache)?;
        Ok(conn)
    }

    fn setup(mut db: Connection, opts: &ConnOptions) -> Result<Self> {
        crate::metrics::register();
        db.trace_v2(
            TraceEventCodes::SQLITE_TRACE_PROFILE,
            Some(|e: TraceEvent<'_>| {
                if let TraceEvent::Profile(_, d) = e {
                    crate::metrics::statement(Backend::Sqlite, d);
                }
            }),
        )?;
        db.set_prepared_statement_cache_capacity(opts.statement_cache);
        db.busy_timeout(opts.busy_timeout)?;
        let limit = db
            .limit(rusqlite::limits::Limit::SQLITE_LIMIT_VARIABLE_NUMBER)
            .map_or(999, |l| usize::try_from(l).unwrap_or(999));
        Ok(Conn {
            engine: Engine::Sqlite(db),
            depth: Cell::new(0),
            batch_params: opts.batch_params.min(limit).max(1),
        })
    }

    /// Connects to PostgreSQL with a URL or `key=value` string (see [`pg::Config`]).
    pub fn connect(params: &str) -> Result<Self> {
        Self::connect_config(&pg::Config::parse(params)?)
    }

    /// Connects to PostgreSQL with `config`.
    pub fn connect_config(config: &pg::Config) -> Result<Self> {
        let client = pg::Client::connect_config(config)?;
        Ok(Self::from_pg(
            PgHandle::Owned(Box::new(client)),
            DEFAULT_PG_BATCH_PARAMS,
        ))
    }

    pub(crate) fn from_pg(handle: PgHandle, batch_params: usize) -> Self {
        Conn {
            engine: Engine::Pg(RefCell::new(handle)),
            depth: Cell::new(0),
            batch_params: batch_params.clamp(1, pg::MAX_PARAMS as usize),
        }
    }

    /// Sets the most bound values per batch INSERT (at least 1; SQLite's own limit still caps
    /// it). Default [`DEFAULT_BATCH_PARAMS`] (SQLite) or [`DEFAULT_PG_BATCH_PARAMS`].
    pub fn with_batch_params(mut self, n: usize) -> Self {
        let cap = self.on_engine(
            |db| {
                db.limit(rusqlite::limits::Limit::SQLITE_LIMIT_VARIABLE_NUMBER)
                    .map_or(999, |l| usize::try_from(l).unwrap_or(999))
            },
            |_| pg::MAX_PARAMS as usize,
        );
        self.batch_params = n.clamp(1, cap);
        self
    }

    /// The engine behind this connection.
    pub fn backend(&self) -> Backend {
        self.on_engine(|_| Backend::Sqlite, |_| Backend::Postgres)
    }

    /// The underlying rusqlite connection (SQLite only), for SQL the ORM does not cover.
    pub fn sqlite(&self) -> Option<&Connection> {
        self.on_engine(Some, |_| None)
    }

    /// The underlying PostgreSQL client (PostgreSQL only), for SQL the ORM does not cover;
    /// `None` too when a `Db` call could not check one out of the pool. Do not hold it across
    /// another ORM call on this `Conn`.
    pub fn pg(&self) -> Option<RefMut<'_, pg::Client>> {
        self.on_engine(
            |_| None,
            |c| RefMut::filter_map(c.borrow_mut(), |h| h.client().ok()).ok(),
        )
    }

    /// The SQLite connection of a connection known to be SQLite (opening paths only).
    fn sqlite_db(&self) -> &Connection {
        self.on_engine(|db| db, |_| unreachable!("opened as SQLite"))
    }

    /// Runs SQL text without parameters or results (one or more statements), on either engine.
    pub fn execute_batch(&self, sql: &str) -> Result<()> {
        self.on_engine(
            |db| Ok(db.execute_batch(sql)?),
            |c| Ok(c.borrow_mut().client()?.batch_execute(sql)?),
        )
    }

    /// Whether a transaction is open on this connection.
    pub fn in_transaction(&self) -> bool {
        self.depth.get() > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pragma(c: &Conn, name: &str) -> String {
        c.sqlite()
            .unwrap()
            .pragma_query_value(None, name, |r| {
                Ok(match r.get_ref(0)? {
                    rusqlite::types::ValueRef::Integer(i) => i.to_string(),
                    v => v.as_str().unwrap_or_default().to_owned(),
                })
            })
            .unwrap()
    }

    #[test]
    fn modes_set_their_pragmas() {
        let dir = std::env::temp_dir().join(format!("moria-orm-conn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let full = Conn::open(dir.join("full.db"), Mode::Full).unwrap();
        assert_eq!(pragma(&full, "synchronous"), "2");
        let off = Conn::open(dir.join("off.db"), Mode::Off).unwrap();
        assert_eq!(pragma(&off, "synchronous"), "0");
        assert_eq!(pragma(&off, "locking_mode"), "normal");
        let exc = Conn::open(dir.join("exc.db"), Mode::OffExclusive).unwrap();
        assert_eq!(pragma(&exc, "locking_mode"), "exclusive");
        let wal = Conn::open_with(
            dir.join("wal.db"),
            &ConnOptions {
                wal: true,
                ..ConnOptions::new(Mode::Off)
            },
        )
        .unwrap();
        assert_eq!(pragma(&wal, "journal_mode"), "wal");
        drop((full, off, exc, wal));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn wal_in_memory_is_refused() {
        let opts = ConnOptions {
            wal: true,
            ..ConnOptions::new(Mode::Memory)
        };
        assert!(matches!(
            Conn::open_with(":memory:", &opts),
            Err(Error::Config(_))
        ));
    }
}
