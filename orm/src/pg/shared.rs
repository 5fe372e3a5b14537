//! [`SharedClient`]: one connection shared by many fibers, their statements pipelined.
//!
//! Each call encodes its Bind/Execute/Sync (or Parse/Describe/Sync the first time a statement
//! is seen) into the connection's outgoing buffer and joins a FIFO of requests. One fiber at a
//! time is the *driver*: it writes what is queued, reads the answer of the request at the head
//! of the FIFO, hands it to that request's fiber, and repeats until its own request is
//! answered; then it passes the role to the fiber at the new head. So the driver both writes
//! and reads (one waiter per socket), and every request queued while it waited on the server
//! goes out in the next write: N fibers' statements share one round trip.
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

use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::BytesMut;
use moria_runtime::sync::Semaphore;
use postgres_protocol::message::frontend;

use super::cache::StmtCache;
use super::codec::{encode_execute, encode_prepare, Params};
use super::config::Config;
use super::connect_raw::connect_raw;
use super::connection::Connection;
use super::error::{Error, Result};
use super::row::{Column, Row, Statement};
use crate::metrics;

/// Most request bytes written to the server and not yet answered before the driver waits for
/// answers (a single larger request is still written, alone).
pub const MAX_IN_FLIGHT_BYTES: usize = 64 * 1024;

/// What the answer at the head of the FIFO is.
#[derive(Clone)]
enum ExpectedReply {
    Prepare(Arc<str>),
    Execute(Arc<[Column]>),
}

/// A finished request.
enum Done {
    Prepared(Statement),
    Rows(Vec<Row>, u64),
}

enum SlotState {
    Waiting,
    Drive,
    Done(Result<Done>),
}

/// Where a fiber waits for its answer, or for the driver role.
struct Slot {
    state: Mutex<SlotState>,
    /// Released once per `put`: an atomic when nobody waits yet.
    wake: Semaphore,
}

impl Slot {
    fn put(&self, s: SlotState) {
        *lock(&self.state) = s;
        self.wake.release();
    }

    fn take(&self) -> SlotState {
        std::mem::replace(&mut *lock(&self.state), SlotState::Waiting)
    }
}

struct Request {
    slot: Arc<Slot>,
    kind: ExpectedReply,
    len: usize,
}

struct State {
    /// The connection, here while no fiber drives.
    client: Option<Connection>,
    /// Encoded requests `queue[sent..]`, in order.
    out: BytesMut,
    /// Requests not answered yet, in wire order.
    queue: VecDeque<Request>,
    /// Requests at the front of `queue` already written.
    sent: usize,
    /// Bytes of those.
    in_flight: usize,
    driving: bool,
    broken: bool,
    cache: StmtCache,
    next_name: u64,
}

impl State {
    /// The queued bytes the driver may write now (whole requests, bounded by
    /// [`MAX_IN_FLIGHT_BYTES`]).
    fn take_sendable(&mut self) -> BytesMut {
        let mut n = 0;
        while let Some(r) = self.queue.get(self.sent) {
            if self.in_flight > 0 && self.in_flight + r.len > MAX_IN_FLIGHT_BYTES {
                break;
            }
            self.in_flight += r.len;
            n += r.len;
            self.sent += 1;
        }
        self.out.split_to(n)
    }

    fn prepare(&mut self, sql: &str) -> Result<ExpectedReply> {
        self.next_name += 1;
        let name: Arc<str> = format!("moria_p{}", self.next_name).into();
        encode_prepare(&mut self.out, &name, sql)?;
        frontend::sync(&mut self.out);
        Ok(ExpectedReply::Prepare(name))
    }

    fn execute(&mut self, stmt: &Statement, params: Params<'_>) -> Result<ExpectedReply> {
        encode_execute(&mut self.out, stmt, params)?;
        Ok(ExpectedReply::Execute(stmt.columns.clone()))
    }

    /// The statement to use for `key` after preparing `ours`: the cached one when another
    /// fiber prepared it meanwhile (ours is closed), else ours, now cached.
    fn adopt(&mut self, key: &str, ours: Statement) -> Result<Statement> {
        match self.cache.get(key) {
            Some(theirs) => {
                frontend::close(b'S', &ours.name, &mut self.out)?;
                Ok(theirs)
            }
            None => {
                self.cache.insert(key, &ours, &mut self.out)?;
                Ok(ours)
            }
        }
    }
}

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

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
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
                state: Mutex::new(State {
                    client: Some(client),
                    out: BytesMut::new(),
                    queue: VecDeque::new(),
                    sent: 0,
                    in_flight: 0,
                    driving: false,
                    broken: false,
                    cache: StmtCache::new(cfg.statement_cache.max(1)),
                    next_name: 0,
                }),
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
        Ok(self.run(sql, &|| sql.to_owned(), params)?.0)
    }

    /// Runs `sql` and returns the number of rows it affected.
    pub fn execute(&self, sql: &str, params: Params<'_>) -> Result<u64> {
        Ok(self.run(sql, &|| sql.to_owned(), params)?.1)
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
            let done = self.submit(params.len(), &mut |st, i| {
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
        match self.call(&mut |st| st.prepare(sql))? {
            Done::Prepared(s) => Ok(s),
            Done::Rows(..) => Err(Error::protocol("an execute answered a prepare")),
        }
    }

    /// Runs the statement cached under `key` (prepared from `text()` on first use): its rows
    /// and affected-row count.
    pub(crate) fn run(
        &self,
        key: &str,
        text: &dyn Fn() -> String,
        params: Params<'_>,
    ) -> Result<(Vec<Row>, u64)> {
        let first = self.call(&mut |st| match st.cache.get(key) {
            Some(s) => st.execute(&s, params),
            None => st.prepare(&text()),
        })?;
        let ours = match first {
            Done::Rows(rows, n) => return Ok((rows, n)),
            Done::Prepared(s) => s,
        };
        let mut ours = Some(ours);
        let second = self.call(&mut |st| {
            let stmt = match ours.take() {
                Some(s) => st.adopt(key, s)?,
                None => return Err(Error::protocol("statement adopted twice")),
            };
            st.execute(&stmt, params)
        })?;
        match second {
            Done::Rows(rows, n) => Ok((rows, n)),
            Done::Prepared(_) => Err(Error::protocol("a prepare answered an execute")),
        }
    }

    /// Queues one request built by `build` and waits for its answer.
    fn call(&self, build: &mut dyn FnMut(&mut State) -> Result<ExpectedReply>) -> Result<Done> {
        let mut done = self.submit(1, &mut |st, _| build(st))?;
        done.pop()
            .unwrap_or_else(|| Err(Error::protocol("a request without an answer")))
    }

    /// Queues `n` requests, the `i`th built by `build(state, i)`, back to back, and waits for
    /// their answers, driving the connection when it is this fiber's turn. A build error
    /// queues none of them.
    fn submit(
        &self,
        n: usize,
        build: &mut dyn FnMut(&mut State, usize) -> Result<ExpectedReply>,
    ) -> Result<Vec<Result<Done>>> {
        let slots: Vec<Arc<Slot>> = (0..n)
            .map(|_| {
                Arc::new(Slot {
                    state: Mutex::new(SlotState::Waiting),
                    wake: Semaphore::new(0),
                })
            })
            .collect();
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
                self.drive(&last);
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
                    last.wake.acquire();
                    drive = false;
                }
            }
        }
    }

    /// Writes queued requests and reads answers in order until `own` is answered, then hands
    /// the connection to the next waiting fiber.
    fn drive(&self, own: &Arc<Slot>) {
        let Some(mut client) = lock(&self.inner.state).client.take() else {
            self.fail_all(None, Error::protocol("shared connection without a driver"));
            return;
        };
        loop {
            if !client.has_message() {
                // Before a write or a read that may wait, the fibers that are ready on this
                // worker run first and queue their statements, so those go out in this write
                // (tokio-postgres gets the same from its connection task running after the
                // tasks that are ready). Without it a server on the same CPU answers each
                // statement before the next is queued: one write per statement
                // (bench/results/2026-12-01-tfb-database-rows.md).
                moria_runtime::yield_now();
            }
            let (bytes, head) = {
                let mut st = lock(&self.inner.state);
                // Write only before the socket read would wait (or when the head is not
                // written yet): requests queued meanwhile then go out together.
                let bytes = if st.sent == 0 || !client.has_message() {
                    st.take_sendable()
                } else {
                    BytesMut::new()
                };
                let head = st.queue.front().map(|r| (r.slot.clone(), r.kind.clone()));
                (bytes, head)
            };
            let Some((slot, kind)) = head else {
                self.fail_all(
                    Some(client),
                    Error::protocol("shared connection lost a request"),
                );
                return;
            };
            if !bytes.is_empty() {
                client.wbuf = bytes;
                if let Err(e) = client.flush() {
                    self.fail_all(Some(client), e);
                    return;
                }
            }
            // A panic here (a bug, not user code: rows are decoded by their callers) must not
            // strand the fibers waiting on this connection.
            let got = match catch_unwind(AssertUnwindSafe(|| {
                client.begin_op().and_then(|_| read(&mut client, &kind))
            })) {
                Ok(got) => got,
                Err(p) => {
                    self.fail_all(Some(client), Error::protocol("the reader panicked"));
                    resume_unwind(p)
                }
            };
            client.end_op();
            if client.is_broken() {
                self.fail_all(Some(client), got.err().unwrap_or(Error::Closed));
                return;
            }
            let mut st = lock(&self.inner.state);
            if let Some(r) = st.queue.pop_front() {
                self.inner.queued.fetch_sub(1, Ordering::Relaxed);
                metrics::PG_SHARED_QUEUED.fetch_sub(1, Ordering::Relaxed);
                st.sent -= 1;
                st.in_flight -= r.len;
            }
            if Arc::ptr_eq(&slot, own) {
                st.client = Some(client);
                // The newest request drives next: its answer comes last, so it reads every answer
                // before its own and wakes their fibers, instead of one driver per answer.
                let next = st.queue.back().map(|r| r.slot.clone());
                st.driving = next.is_some();
                // Wakes happen outside the state lock: setting an event may park this fiber,
                // and a worker blocked on a std lock held by a parked fiber would stall.
                drop(st);
                own.put(SlotState::Done(got));
                if let Some(next) = next {
                    next.put(SlotState::Drive);
                }
                return;
            }
            drop(st);
            slot.put(SlotState::Done(got));
        }
    }

    /// The connection is gone: every request fails (the head with `e`), later calls get
    /// [`Error::Closed`].
    fn fail_all(&self, client: Option<Connection>, e: Error) {
        drop(client);
        let queue = {
            let mut st = lock(&self.inner.state);
            st.broken = true;
            st.driving = false;
            st.out.clear();
            st.sent = 0;
            st.in_flight = 0;
            let was = self.inner.queued.swap(0, Ordering::Relaxed);
            metrics::PG_SHARED_QUEUED.fetch_sub(was as i64, Ordering::Relaxed);
            std::mem::take(&mut st.queue)
        };
        let mut e = Some(e);
        for r in queue {
            let err = match e.take() {
                Some(first) => first,
                None => Error::Closed,
            };
            r.slot.put(SlotState::Done(Err(err)));
        }
    }
}

/// The rows of an answered execute.
fn rows_of(done: Result<Done>) -> Result<Vec<Row>> {
    match done? {
        Done::Rows(rows, _) => Ok(rows),
        Done::Prepared(_) => Err(Error::protocol("a prepare answered an execute")),
    }
}

/// Reads the answer to one request.
fn read(client: &mut Connection, kind: &ExpectedReply) -> Result<Done> {
    match kind {
        ExpectedReply::Prepare(name) => client.read_prepare_reply(name).map(Done::Prepared),
        ExpectedReply::Execute(columns) => {
            let mut rows = Vec::new();
            let n = client.read_execute(columns, &mut |r| {
                rows.push(r);
                Ok(())
            })?;
            Ok(Done::Rows(rows, n))
        }
    }
}
