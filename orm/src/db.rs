//! [`Db`]: the handle fibers use, on SQLite or PostgreSQL — the same type and calls.
//!
//! `Db::open("app.db")` (or `":memory:"`) opens SQLite: every call runs its [`Conn`] work on a
//! dispatcher (see [`Dispatch`]) so SQLite's disk I/O never stalls a scheduler worker. Writes go to
//! the one writer connection; with WAL and `readers(n)`, reads go to a pool of read-only
//! connections and run beside the writer.
//!
//! `Db::open("postgres://user:pass@host/db")` opens PostgreSQL: every call runs on the calling
//! fiber. Its single statements go through the pool's shared connections
//! ([`pg::PoolOptions::pipelined`], pipelined: many fibers' statements share one round trip);
//! a transaction or raw SQL checks a connection out of the [`pg::Pool`] (`pool_size`,
//! `acquire_timeout`), and a call that cannot get one in time fails with
//! `Error::Postgres(pg::Error::PoolTimeout)` (REST answers 503).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::batch::Batch;
use crate::conn::{Conn, ConnOptions, Mode};
use crate::dispatch::{Dispatch, Dispatcher, Opener};
use crate::error::{Error, Result};
use crate::json::JsonFormat;
use crate::model::Model;
use crate::pg;
use crate::query::Query;

/// Most reader connections a database may have.
pub const MAX_READERS: usize = 64;
/// Dispatch of file databases when the builder does not choose: level with `Offload` for a
/// lone caller, ahead under concurrency (`cargo run --release -p moria-bench --bin orm --
/// --dispatch`, bench/README.md).
pub const DEFAULT_FILE_DISPATCH: Dispatch = Dispatch::Thread;

/// Settings for [`Db`]; `Db::builder(path)` starts with every default.
#[derive(Clone, Debug)]
pub struct DbBuilder {
    path: PathBuf,
    conn: ConnOptions,
    readers: usize,
    dispatch: Option<Dispatch>,
    pool: pg::PoolOptions,
    batch_params_set: bool,
    statement_cache_set: bool,
}

/// Whether `target` names a PostgreSQL server rather than a SQLite file.
pub fn is_postgres_url(target: &str) -> bool {
    target.starts_with("postgres://") || target.starts_with("postgresql://")
}

impl DbBuilder {
    fn new(path: &Path) -> Self {
        let text = path.to_string_lossy();
        let memory = text.is_empty() || text == ":memory:";
        DbBuilder {
            path: path.to_owned(),
            conn: ConnOptions::new(if memory { Mode::Memory } else { Mode::Off }),
            readers: 0,
            dispatch: None,
            pool: pg::PoolOptions::default(),
            batch_params_set: false,
            statement_cache_set: false,
        }
    }

    /// Whether this builder opens PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        self.path.to_str().is_some_and(is_postgres_url)
    }

    /// PostgreSQL: most pooled connections. Default [`pg::DEFAULT_POOL_SIZE`].
    pub fn pool_size(mut self, n: usize) -> Self {
        self.pool.max_size = n;
        self
    }

    /// PostgreSQL: how long a call waits for a free connection. Default
    /// [`pg::DEFAULT_ACQUIRE_TIMEOUT`].
    pub fn acquire_timeout(mut self, d: Duration) -> Self {
        self.pool.acquire_timeout = d;
        self
    }

    /// PostgreSQL: all pool settings at once.
    pub fn pool_options(mut self, opts: pg::PoolOptions) -> Self {
        self.pool = opts;
        self
    }

    /// Durability and locking. Default [`Mode::Off`].
    pub fn mode(mut self, mode: Mode) -> Self {
        self.conn.mode = mode;
        self
    }

    /// Write-ahead log. Default off.
    pub fn wal(mut self, on: bool) -> Self {
        self.conn.wal = on;
        self
    }

    /// Read-only connections for reads (needs WAL, not `OffExclusive`). Default 0: reads use
    /// the writer.
    pub fn readers(mut self, n: usize) -> Self {
        self.readers = n;
        self
    }

    /// How calls reach SQLite. Default [`Dispatch::Inline`] for [`Mode::Memory`], else
    /// [`DEFAULT_FILE_DISPATCH`].
    pub fn dispatch(mut self, how: Dispatch) -> Self {
        self.dispatch = Some(how);
        self
    }

    /// Prepared statements cached per connection. Default
    /// [`DEFAULT_STATEMENT_CACHE`](crate::DEFAULT_STATEMENT_CACHE).
    pub fn statement_cache(mut self, n: usize) -> Self {
        self.statement_cache_set = true;
        self.conn.statement_cache = n;
        self
    }

    /// Most bound values per batch INSERT. Default
    /// [`DEFAULT_BATCH_PARAMS`](crate::DEFAULT_BATCH_PARAMS).
    pub fn batch_params(mut self, n: usize) -> Self {
        self.batch_params_set = true;
        self.conn.batch_params = n;
        self
    }

    /// Wait for locks held by other connections. Default
    /// [`DEFAULT_BUSY_TIMEOUT`](crate::DEFAULT_BUSY_TIMEOUT).
    pub fn busy_timeout(mut self, d: Duration) -> Self {
        self.conn.busy_timeout = d;
        self
    }

    fn validate(&self) -> Result<Dispatch> {
        self.conn.validate()?;
        let memory = self.conn.mode == Mode::Memory;
        let how = self.dispatch.unwrap_or(if memory {
            Dispatch::Inline
        } else {
            DEFAULT_FILE_DISPATCH
        });
        if how == Dispatch::Inline && !memory {
            return Err(Error::Config(
                "inline dispatch would block a worker on disk I/O; it is for Mode::Memory only"
                    .into(),
            ));
        }
        if self.readers > MAX_READERS {
            return Err(Error::Config(format!("at most {MAX_READERS} readers")));
        }
        if self.readers > 0 && (!self.conn.wal || self.conn.mode == Mode::OffExclusive) {
            return Err(Error::Config(
                "readers need WAL and a non-exclusive file mode".into(),
            ));
        }
        Ok(how)
    }

    /// PostgreSQL: the pool, checked with one connection.
    fn open_postgres(self) -> Result<Db> {
        if self.readers > 0 || self.conn.wal {
            return Err(Error::Config(
                "readers and WAL are SQLite settings; PostgreSQL reads and writes share the pool"
                    .into(),
            ));
        }
        if self.conn.batch_params == 0 {
            return Err(Error::Config("batch_params must be at least 1".into()));
        }
        let mut config = pg::Config::parse(&self.path.to_string_lossy())?;
        if self.statement_cache_set {
            config.statement_cache = self.conn.statement_cache;
        }
        let batch = if self.batch_params_set {
            self.conn.batch_params
        } else {
            crate::conn::DEFAULT_PG_BATCH_PARAMS
        };
        let pool = pg::Pool::new(config, self.pool)?;
        let dispatcher = crate::dispatch::pg::PgDispatcher::open(pool, batch)?;
        Ok(Db {
            inner: Arc::new(Inner {
                readers: None,
                writer: Dispatcher::Pg(dispatcher),
            }),
        })
    }

    /// Opens the database: for SQLite the writer (creating the file) and then the readers;
    /// for PostgreSQL the pool (with one connection, to fail early on a bad URL).
    pub fn open(self) -> Result<Db> {
        if self.is_postgres() {
            return self.open_postgres();
        }
        let how = self.validate()?;
        let opts = Arc::new(self.conn);
        let path = Arc::new(self.path);
        let writer_open: Opener = {
            let (opts, path) = (opts.clone(), path.clone());
            Arc::new(move || Conn::open_with(&*path, &opts))
        };
        let writer = Dispatcher::open(how, 1, writer_open, "writer")?;
        let readers = if self.readers > 0 {
            let reader_open: Opener = Arc::new(move || Conn::open_reader(&path, &opts));
            Some(Dispatcher::open(how, self.readers, reader_open, "reader")?)
        } else {
            None
        };
        Ok(Db {
            inner: Arc::new(Inner { readers, writer }),
        })
    }
}

struct Inner {
    // Readers are declared first so they close before the writer.
    readers: Option<Dispatcher>,
    writer: Dispatcher,
}

/// A database for fibers: cheap to clone, every call parks only the calling fiber. Dropping
/// the last clone closes the connections after the calls already queued (with the thread
/// dispatcher it joins the connection threads).
#[derive(Clone)]
pub struct Db {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("readers", &self.inner.readers.is_some())
            .finish()
    }
}

impl Db {
    /// Opens `target` with default settings: a `postgres://` URL is PostgreSQL, `":memory:"`
    /// an in-memory SQLite database, anything else a SQLite file ([`Mode::Off`]).
    ///
    /// ```no_run
    /// # fn main() -> moria_orm::Result<()> {
    /// let local = moria_orm::Db::open("app.db")?;
    /// let shared = moria_orm::Db::open("postgres://app:secret@db.internal/app")?;
    /// # Ok(()) }
    /// ```
    pub fn open(target: impl AsRef<Path>) -> Result<Db> {
        Db::builder(target).open()
    }

    /// Starts a builder for `target` (a SQLite path, `":memory:"`, or a `postgres://` URL).
    pub fn builder(target: impl AsRef<Path>) -> DbBuilder {
        DbBuilder::new(target.as_ref())
    }

    /// The engine behind this database.
    pub fn backend(&self) -> crate::conn::Backend {
        match &self.inner.writer {
            Dispatcher::Pg(_) => crate::conn::Backend::Postgres,
            _ => crate::conn::Backend::Sqlite,
        }
    }

    /// The PostgreSQL pool, for a PostgreSQL database.
    pub fn pg_pool(&self) -> Option<&pg::Pool> {
        match &self.inner.writer {
            Dispatcher::Pg(l) => Some(&l.pool),
            _ => None,
        }
    }

    /// This database's identity (shared by its clones), for the reentrancy guard.
    fn id(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    /// Runs `f` on the writer connection. A `Db` call on this database from inside `f` returns
    /// [`Error::Reentrant`]: use `f`'s `Conn` instead.
    pub fn run<R, F>(&self, f: F) -> Result<R>
    where
        F: FnOnce(&Conn) -> Result<R> + Send + 'static,
        R: Send + 'static,
    {
        #[cfg(feature = "tracing")]
        let _span = self.call_span("run").entered();
        self.inner.writer.call(self.id(), f)
    }

    /// Runs `f` on a reader connection when there are readers, else on the writer.
    pub fn read<R, F>(&self, f: F) -> Result<R>
    where
        F: FnOnce(&Conn) -> Result<R> + Send + 'static,
        R: Send + 'static,
    {
        #[cfg(feature = "tracing")]
        let _span = self.call_span("read").entered();
        match &self.inner.readers {
            Some(r) => r.call(self.id(), f),
            None => self.inner.writer.call(self.id(), f),
        }
    }

    /// The span of one call on this database (feature `tracing`): it follows the calling
    /// fiber, and PostgreSQL statements nest under it.
    #[cfg(feature = "tracing")]
    fn call_span(&self, kind: &'static str) -> tracing::Span {
        let backend = match self.backend() {
            crate::conn::Backend::Sqlite => "sqlite",
            crate::conn::Backend::Postgres => "postgres",
        };
        tracing::debug_span!("orm", kind, backend)
    }

    /// Runs `f` in a transaction on the writer: commit on `Ok`, roll back on `Err` or panic.
    pub fn transaction<R, F>(&self, f: F) -> Result<R>
    where
        F: FnOnce(&Conn) -> Result<R> + Send + 'static,
        R: Send + 'static,
    {
        self.run(move |c| c.transaction(f))
    }

    /// See [`Conn::ensure_schema`].
    pub fn ensure_schema<T: Model>(&self) -> Result<()> {
        self.run(|c| c.ensure_schema::<T>())
    }

    /// Adds `m`; returns it with its id and timestamps set.
    pub fn add<T: Model>(&self, mut m: T) -> Result<T> {
        self.run(move |c| c.add(&mut m).map(|_| m))
    }

    /// See [`Conn::get`].
    pub fn get<T: Model>(&self, id: i64) -> Result<T> {
        self.read(move |c| c.get(id))
    }

    /// See [`Conn::find`].
    pub fn find<T: Model>(&self, q: Query) -> Result<Option<T>> {
        self.read(move |c| c.find(&q))
    }

    /// See [`Conn::list`].
    pub fn list<T: Model>(&self, q: Query) -> Result<Vec<T>> {
        self.read(move |c| c.list(&q))
    }

    /// Updates `m`; returns it with its `ModTime` fields refreshed.
    pub fn update<T: Model>(&self, mut m: T) -> Result<T> {
        self.run(move |c| c.update(&mut m).map(|_| m))
    }

    /// Updates the named fields of `m`; returns it with its `ModTime` fields refreshed.
    pub fn update_fields<T: Model>(&self, mut m: T, fields: &[&str]) -> Result<T> {
        let names: Vec<String> = fields.iter().map(|s| (*s).to_owned()).collect();
        self.run(move |c| {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            c.update_fields(&mut m, &names).map(|_| m)
        })
    }

    /// See [`Conn::delete`].
    pub fn delete<T: Model>(&self, id: i64) -> Result<()> {
        self.run(move |c| c.delete::<T>(id))
    }

    /// See [`Conn::delete_where`].
    pub fn delete_where<T: Model>(&self, q: Query) -> Result<usize> {
        self.run(move |c| c.delete_where::<T>(&q))
    }

    /// See [`Conn::count`].
    pub fn count<T: Model>(&self, q: Query) -> Result<i64> {
        self.read(move |c| c.count::<T>(&q))
    }

    /// See [`Conn::exists`].
    pub fn exists<T: Model>(&self, id: i64) -> Result<bool> {
        self.read(move |c| c.exists::<T>(id))
    }

    /// Sends `batch` all-or-nothing; see [`Conn::batch_send`].
    pub fn batch_send<T: Model>(&self, mut batch: Batch<T>) -> Result<Vec<i64>> {
        self.run(move |c| c.batch_send(&mut batch))
    }

    /// The rows matching `q` as JSON; see [`Conn::write_json`].
    pub fn json<T: Model>(&self, q: Query, format: JsonFormat) -> Result<Vec<u8>> {
        self.read(move |c| {
            let mut out = Vec::with_capacity(256);
            c.write_json::<T, _>(&q, format, &mut out)?;
            Ok(out)
        })
    }

    /// The row with this id as a JSON object; see [`Conn::write_json_by_id`].
    pub fn json_by_id<T: Model>(&self, id: i64) -> Result<Vec<u8>> {
        self.read(move |c| {
            let mut out = Vec::with_capacity(128);
            c.write_json_by_id::<T, _>(id, &mut out)?;
            Ok(out)
        })
    }
}
