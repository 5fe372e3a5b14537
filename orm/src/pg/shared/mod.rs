//! [`SharedClient`]: one connection shared by many fibers, their statements pipelined.
//!
//! Each call encodes its Bind/Execute/Sync (or Parse/Describe/Sync the first time a statement
//! is seen) into the connection's outgoing buffer and joins a FIFO of requests. One fiber at a
//! time is the *driver*: it writes what is queued, reads the answer of the request at the head
//! of the FIFO, hands it to that request's fiber, and repeats until its own request is
//! answered; then it passes the role to the fiber of the newest request. So the driver both
//! writes and reads (one waiter per socket), and every request queued while it waited on the
//! server goes out in the next write: N fibers' statements share one round trip.
//!
//! Rows: the driver hands the rows of its own request to its row handler as they arrive, read
//! in place in the socket buffer; the rows it reads for a waiting fiber are copied into one
//! [`RowSet`] buffer (no allocation per row), which that fiber walks when it wakes.
//!
//! | file | job |
//! |---|---|
//! | `mod.rs` | [`SharedClient`]: the calls, queueing requests and waiting for answers |
//! | `state` | the FIFO, the in-flight window ([`MAX_IN_FLIGHT_BYTES`]), the slots fibers wait on |
//! | `driver` | writing and reading in order, handing answers on, failing everything when the connection dies |
//!
//! Answers are matched to requests by position, and each request ends with its own Sync, so:
//! - a statement error fails that request only (the server skips to its Sync, the others run);
//! - a deadline ([`Config::query_timeout`](super::Config), counted from when the answer before
//!   it has been read, i.e. when the server starts on it) cancels on the server and fails that
//!   request with [`Error::Timeout`]; a cancel request names the
//!   backend, not the statement, so one that lands just after the late statement ended cancels
//!   the next one instead (that call fails with SQLSTATE 57014, never with someone else's rows);
//! - an I/O error, a protocol violation or a FATAL error fails every request on the connection
//!   (written or not) and later calls with [`Error::Closed`]: nothing waits for an answer that
//!   cannot come.
//!
//! The driver writes at most [`MAX_IN_FLIGHT_BYTES`] of requests ahead of the answers it has
//! read (one request always goes), so a large request cannot deadlock against a large result
//! that fills both socket buffers. Transactions, COPY and anything that needs a connection to
//! itself use a [`Client`](super::Client) from the [`Pool`](super::Pool) instead.

mod driver;
mod state;

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::codec::Params;
use super::config::Config;
use super::connect_raw::connect_raw;
use super::error::{Error, Result};
use super::row::Statement;
use super::rows::{Row, RowRef, RowSet};
use crate::metrics;
use driver::RowSink;
pub use state::MAX_IN_FLIGHT_BYTES;
use state::{lock, Done, ExpectedReply, Request, Slot, SlotState, State};

struct Inner {
    state: Mutex<State>,
    /// `state.queue.len()`, readable without the lock.
    queued: AtomicUsize,
    pid: i32,
}

/// One PostgreSQL connection that many fibers use at once, their statements pipelined (see
/// the module docs); cheap to clone. No transactions: use a [`Client`](super::Client) for those.
#[derive(Clone)]
pub struct SharedClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for SharedClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedClient")
            .field("pid", &self.inner.pid)
            .field("broken", &self.is_broken())
            .finish_non_exhaustive()
    }
}

impl SharedClient {
    /// Connects with a URL or `key=value` string (see [`Config`]).
    pub fn connect(params: &str) -> Result<SharedClient> {
        SharedClient::connect_config(&Config::parse(params)?)
    }

    /// Connects with `cfg`; its statement cache size and query timeout apply.
    pub fn connect_config(cfg: &Config) -> Result<SharedClient> {
        let client = connect_raw(cfg)?;
        Ok(SharedClient {
            inner: Arc::new(Inner {
                pid: client.backend_pid(),
                queued: AtomicUsize::new(0),
                state: Mutex::new(State::new(client, cfg.statement_cache.max(1))),
            }),
        })
    }

    /// The backend process id of the connection.
    pub fn backend_pid(&self) -> i32 {
        self.inner.pid
    }

    /// Requests queued or in flight on the connection right now.
    pub fn pending(&self) -> usize {
        self.inner.queued.load(Ordering::Relaxed)
    }

    /// Whether the connection failed; every call now returns [`Error::Closed`].
    pub fn is_broken(&self) -> bool {
        lock(&self.inner.state).broken
    }

    /// Whether the connection can take calls: not broken, and — when nothing is in flight —
    /// not closed by the server while it sat idle (a check that never waits).
    pub fn is_usable(&self) -> bool {
        let mut st = lock(&self.inner.state);
        if !st.broken && st.queue.is_empty() {
            if let Some(c) = st.client.as_mut() {
                st.broken = c.is_closed_by_peer();
            }
        }
        !st.broken
    }

    /// Runs `sql` (statement cached per connection) and collects its rows.
    pub fn query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>> {
        let mut set: Option<RowSet> = None;
        let mut streamed: Option<RowSet> = None;
        let mut collect = |row: RowRef<'_>| {
            RowSet::push_to(&mut streamed, row);
            Ok(())
        };
        self.run(sql, &|| sql.to_owned(), params, &mut collect, &mut set)?;
        Ok(set.or(streamed).map_or_else(Vec::new, RowSet::into_rows))
    }

    /// Runs `sql` (statement cached per connection), handing each row to `each`; returns the
    /// affected-row count. When this fiber is the one reading the connection, its rows reach
    /// `each` as they arrive, read in place, while the fibers queued behind it wait: keep
    /// `each` short and free of I/O (collect, or write to memory). Otherwise the rows were
    /// read for it into one buffer, walked when it wakes. After an error from `each` the rest
    /// of the result is read and dropped; a panic in `each` is resumed on this fiber once
    /// the connection is handed on.
    pub fn query_each(
        &self,
        sql: &str,
        params: Params<'_>,
        each: &mut dyn FnMut(RowRef<'_>) -> Result<()>,
    ) -> Result<u64> {
        self.run_each(sql, &|| sql.to_owned(), params, each)
    }

    /// Runs `sql` and returns the number of rows it affected.
    pub fn execute(&self, sql: &str, params: Params<'_>) -> Result<u64> {
        self.run_each(sql, &|| sql.to_owned(), params, &mut |_| Ok(()))
    }

    /// Runs `sql` once for each parameter set in `params`, all queued at once so they share
    /// round trips with each other and with other fibers' statements; each result is one
    /// run's rows or its error (each run has its own Sync, so a failing one fails alone). The
    /// outer error means none ran (the connection is broken, or `sql` failed to prepare).
    pub fn query_many(&self, sql: &str, params: &[Params<'_>]) -> Result<Vec<Result<Vec<Row>>>> {
        if params.is_empty() {
            return Ok(Vec::new());
        }
        loop {
            let mut ours = if lock(&self.inner.state).cache.get(sql).is_some() {
                None
            } else {
                Some(self.prepare(sql)?)
            };
            let mut stmt: Option<Statement> = None;
            let mut evicted = false;
            let done = self.submit(params.len(), None, &mut |st, i| {
                let s = match (&stmt, ours.take()) {
                    (Some(s), _) => s.clone(),
                    (None, Some(o)) => stmt.insert(st.adopt(sql, o)?).clone(),
                    (None, None) => match st.cache.get(sql) {
                        Some(s) => stmt.insert(s).clone(),
                        None => {
                            // Evicted by other statements since the check: prepare again.
                            evicted = true;
                            return Err(Error::Closed);
                        }
                    },
                };
                st.execute(&s, params[i])
            });
            if evicted {
                continue;
            }
            return done.map(|done| done.into_iter().map(rows_of).collect());
        }
    }

    /// Prepares `sql` on the connection (not cached yet: [`State::adopt`] does that when the
    /// statement is first executed).
    fn prepare(&self, sql: &str) -> Result<Statement> {
        match self.call(None, &mut |st| st.prepare(sql))? {
            Done::Prepared(s) => Ok(s),
            _ => Err(Error::protocol("an execute answered a prepare")),
        }
    }

    /// Runs the statement cached under `key` (prepared from `text()` on first use), its rows
    /// to `each` (see [`SharedClient::query_each`]); returns the affected-row count.
    pub(crate) fn run_each(
        &self,
        key: &str,
        text: &dyn Fn() -> String,
        params: Params<'_>,
        each: &mut dyn FnMut(RowRef<'_>) -> Result<()>,
    ) -> Result<u64> {
        let mut set: Option<RowSet> = None;
        let n = self.run(key, text, params, each, &mut set)?;
        if let Some(set) = set {
            set.iter().try_for_each(&mut *each)?;
        }
        Ok(n)
    }

    /// Runs the statement cached under `key` (prepared from `text()` on first use): its rows
    /// to `sink` when this fiber reads them itself, else into `set`; returns the affected-row
    /// count.
    fn run(
        &self,
        key: &str,
        text: &dyn Fn() -> String,
        params: Params<'_>,
        sink: RowSink<'_>,
        set: &mut Option<RowSet>,
    ) -> Result<u64> {
        let first = self.call(Some(&mut *sink), &mut |st| match st.cache.get(key) {
            Some(s) => st.execute(&s, params),
            None => st.prepare(&text()),
        })?;
        let ours = match first {
            Done::Prepared(s) => s,
            done => return answered(done, set),
        };
        let mut ours = Some(ours);
        let second = self.call(Some(sink), &mut |st| {
            let stmt = match ours.take() {
                Some(s) => st.adopt(key, s)?,
                None => return Err(Error::protocol("statement adopted twice")),
            };
            st.execute(&stmt, params)
        })?;
        answered(second, set)
    }

    /// Queues one request built by `build` and waits for its answer.
    fn call(
        &self,
        sink: Option<RowSink<'_>>,
        build: &mut dyn FnMut(&mut State) -> Result<ExpectedReply>,
    ) -> Result<Done> {
        let mut done = self.submit(1, sink, &mut |st, _| build(st))?;
        done.pop()
            .unwrap_or_else(|| Err(Error::protocol("a request without an answer")))
    }

    /// Queues `n` requests, the `i`th built by `build(state, i)`, back to back, and waits for
    /// their answers, driving the connection when it is this fiber's turn (the rows of the
    /// last request to `sink` if this fiber reads them). A build error queues none of them.
    fn submit(
        &self,
        n: usize,
        mut sink: Option<RowSink<'_>>,
        build: &mut dyn FnMut(&mut State, usize) -> Result<ExpectedReply>,
    ) -> Result<Vec<Result<Done>>> {
        let slots: Vec<Arc<Slot>> = (0..n).map(|_| Slot::new()).collect();
        let Some(last) = slots.last().cloned() else {
            return Ok(Vec::new());
        };
        let mut drive = {
            let mut st = lock(&self.inner.state);
            if st.broken {
                return Err(Error::Closed);
            }
            let start = st.out.len();
            let mut built = Vec::with_capacity(n);
            for i in 0..n {
                let mark = st.out.len();
                // Parameters encode user `ToSql` code: a failure or panic must leave no bytes.
                match catch_unwind(AssertUnwindSafe(|| build(&mut st, i))) {
                    Ok(Ok(kind)) => built.push((kind, st.out.len() - mark)),
                    Ok(Err(e)) => {
                        st.out.truncate(start);
                        return Err(e);
                    }
                    Err(p) => {
                        st.out.truncate(start);
                        drop(st);
                        resume_unwind(p)
                    }
                }
            }
            self.inner.queued.fetch_add(n, Ordering::Relaxed);
            metrics::PG_SHARED_QUEUED.fetch_add(n as i64, Ordering::Relaxed);
            for ((kind, len), slot) in built.into_iter().zip(&slots) {
                st.queue.push_back(Request {
                    slot: slot.clone(),
                    kind,
                    len,
                });
            }
            !std::mem::replace(&mut st.driving, true)
        };
        // Answers come in order, so once the last request is answered every earlier one is,
        // and only the last can be handed the driver role (it goes to the newest request).
        loop {
            if drive {
                if let Some(p) = self.drive(&last, &mut sink) {
                    // The connection is handed on: the row handler's panic is ours again.
                    resume_unwind(p)
                }
            }
            match last.take() {
                SlotState::Done(r) => {
                    let mut out: Vec<Result<Done>> = slots[..n - 1]
                        .iter()
                        .map(|s| match s.take() {
                            SlotState::Done(r) => r,
                            _ => Err(Error::protocol("an earlier request was not answered")),
                        })
                        .collect();
                    out.push(r);
                    return Ok(out);
                }
                SlotState::Drive => drive = true,
                SlotState::Waiting => {
                    last.wait();
                    drive = false;
                }
            }
        }
    }
}

/// The rows of an answered execute.
fn rows_of(done: Result<Done>) -> Result<Vec<Row>> {
    match done? {
        Done::Rows(rows, _) => Ok(rows.into_rows()),
        Done::Streamed(_) => Ok(Vec::new()),
        Done::Prepared(_) => Err(Error::protocol("a prepare answered an execute")),
    }
}

/// The affected-row count of an answered execute, its rows into `set` when another fiber read
/// them.
fn answered(done: Done, set: &mut Option<RowSet>) -> Result<u64> {
    match done {
        Done::Rows(rows, n) => {
            *set = Some(rows);
            Ok(n)
        }
        Done::Streamed(n) => Ok(n),
        Done::Prepared(_) => Err(Error::protocol("a prepare answered an execute")),
    }
}
