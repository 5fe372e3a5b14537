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
//! itself use a [`Client`] from the [`Pool`](super::Pool) instead.

use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::BytesMut;
use moria_runtime::sync::Semaphore;
use postgres_protocol::message::frontend;

use super::cache::StmtCache;
use super::client::{encode_execute, encode_prepare, Client, Params};
use super::config::Config;
use super::error::{Error, Result};
use super::row::{Column, Row, Statement};

/// Most request bytes written to the server and not yet answered before the driver waits for
/// answers (a single larger request is still written, alone).
pub const MAX_IN_FLIGHT_BYTES: usize = 64 * 1024;

/// What the answer at the head of the FIFO is.
#[derive(Clone)]
enum Kind {
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
    kind: Kind,
    len: usize,
}

struct State {
    /// The connection, here while no fiber drives.
    client: Option<Client>,
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

    fn prepare(&mut self, sql: &str) -> Result<Kind> {
        self.next_name += 1;
        let name: Arc<str> = format!("moria_p{}", self.next_name).into();
        encode_prepare(&mut self.out, &name, sql)?;
        frontend::sync(&mut self.out);
        Ok(Kind::Prepare(name))
    }

    fn execute(&mut self, stmt: &Statement, params: Params<'_>) -> Result<Kind> {
        encode_execute(&mut self.out, stmt, params)?;
        Ok(Kind::Execute(stmt.columns.clone()))
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
/// the module docs); cheap to clone. No transactions: use a [`Client`] for those.
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
        let client = Client::connect_config(cfg)?;
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

    /// Queues one request built by `build` and waits for its answer, driving the connection
    /// when it is this fiber's turn.
    fn call(&self, build: &mut dyn FnMut(&mut State) -> Result<Kind>) -> Result<Done> {
        let slot = Arc::new(Slot {
            state: Mutex::new(SlotState::Waiting),
            wake: Semaphore::new(0),
        });
        let mut drive = {
            let mut st = lock(&self.inner.state);
            if st.broken {
                return Err(Error::Closed);
            }
            let mark = st.out.len();
            // Parameters encode user `ToSql` code: a failure or panic must leave no bytes.
            let kind = match catch_unwind(AssertUnwindSafe(|| build(&mut st))) {
                Ok(Ok(k)) => k,
                Ok(Err(e)) => {
                    st.out.truncate(mark);
                    return Err(e);
                }
                Err(p) => {
                    st.out.truncate(mark);
                    drop(st);
                    resume_unwind(p)
                }
            };
            let len = st.out.len() - mark;
            self.inner.queued.fetch_add(1, Ordering::Relaxed);
            st.queue.push_back(Request {
                slot: slot.clone(),
                kind,
                len,
            });
            !std::mem::replace(&mut st.driving, true)
        };
        loop {
            if drive {
                self.drive(&slot);
            }
            match slot.take() {
                SlotState::Done(r) => return r,
                SlotState::Drive => drive = true,
                SlotState::Waiting => {
                    slot.wake.acquire();
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
    fn fail_all(&self, client: Option<Client>, e: Error) {
        drop(client);
        let queue = {
            let mut st = lock(&self.inner.state);
            st.broken = true;
            st.driving = false;
            st.out.clear();
            st.sent = 0;
            st.in_flight = 0;
            self.inner.queued.store(0, Ordering::Relaxed);
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

/// Reads the answer to one request.
fn read(client: &mut Client, kind: &Kind) -> Result<Done> {
    match kind {
        Kind::Prepare(name) => client.read_prepare_reply(name).map(Done::Prepared),
        Kind::Execute(columns) => {
            let mut rows = Vec::new();
            let n = client.read_execute(columns, &mut |r| {
                rows.push(r);
                Ok(())
            })?;
            Ok(Done::Rows(rows, n))
        }
    }
}
