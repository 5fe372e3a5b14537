//! [`Db`]: the handle fibers use. Every call runs its [`Conn`] work on a lane (see
//! [`Dispatch`]) so SQLite's disk I/O never stalls a scheduler worker.
//!
//! Writes go to the one writer connection. With WAL and `readers(n)`, reads go to a pool of
//! read-only connections and run beside the writer.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::batch::Batch;
use crate::conn::{Conn, ConnOptions, Mode};
use crate::error::{Error, Result};
use crate::json::JsonFormat;
use crate::lane::{Dispatch, Lane, Opener};
use crate::model::Model;
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
}

impl DbBuilder {
    fn new(path: &Path) -> Self {
        DbBuilder {
            path: path.to_owned(),
            conn: ConnOptions::default(),
            readers: 0,
            dispatch: None,
        }
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
        self.conn.statement_cache = n;
        self
    }

    /// Most bound values per batch INSERT. Default
    /// [`DEFAULT_BATCH_PARAMS`](crate::DEFAULT_BATCH_PARAMS).
    pub fn batch_params(mut self, n: usize) -> Self {
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

    /// Opens the writer (creating the file) and then the readers.
    pub fn open(self) -> Result<Db> {
        let how = self.validate()?;
        let opts = Arc::new(self.conn);
        let path = Arc::new(self.path);
        let writer_open: Opener = {
            let (opts, path) = (opts.clone(), path.clone());
            Arc::new(move || Conn::open_with(&*path, &opts))
        };
        let writer = Lane::open(how, 1, writer_open, "writer")?;
        let readers = if self.readers > 0 {
            let reader_open: Opener = Arc::new(move || Conn::open_reader(&path, &opts));
            Some(Lane::open(how, self.readers, reader_open, "reader")?)
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
    readers: Option<Lane>,
    writer: Lane,
}

/// A database for fibers: cheap to clone, every call parks only the calling fiber. Dropping
/// the last clone closes the connections after the calls already queued (with the thread
/// lane it joins the connection threads).
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
    /// Opens `path` in `mode` with default settings.
    pub fn open(path: impl AsRef<Path>, mode: Mode) -> Result<Db> {
        Db::builder(path).mode(mode).open()
    }

    /// Starts a builder for `path` (ignored by [`Mode::Memory`]).
    pub fn builder(path: impl AsRef<Path>) -> DbBuilder {
        DbBuilder::new(path.as_ref())
    }

    /// Runs `f` on the writer connection.
    pub fn run<R, F>(&self, f: F) -> Result<R>
    where
        F: FnOnce(&Conn) -> Result<R> + Send + 'static,
        R: Send + 'static,
    {
        self.inner.writer.call(f)
    }

    /// Runs `f` on a reader connection when there are readers, else on the writer.
    pub fn read<R, F>(&self, f: F) -> Result<R>
    where
        F: FnOnce(&Conn) -> Result<R> + Send + 'static,
        R: Send + 'static,
    {
        match &self.inner.readers {
            Some(r) => r.call(f),
            None => self.inner.writer.call(f),
        }
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
