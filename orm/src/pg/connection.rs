//! [`Connection`]: the framed socket under both clients — message send and receive, server
//! errors, transaction status, and the statement deadline with cancel-on-timeout.
//!
//! Every operation ends at the server's ReadyForQuery, so the connection is always in step.
//! An I/O error, a protocol violation or a FATAL error marks the connection broken; later
//! operations return [`Error::Closed`].

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use bytes::{Buf, BytesMut};
use postgres_protocol::message::backend::{ErrorFields, Message};

use super::config::Config;
use super::error::{DbError, Error, Result, QUERY_CANCELED};
use super::row::Column;
use super::rows::{scan, RowRef, Span};
use super::socket::{self, Peer, Socket};

/// Bytes read from the socket at a time: a result that arrives faster than it is decoded is
/// taken in 64 KiB reads, a quarter of the `read` calls 16 KiB made (the server sends 8 KiB at
/// a time, so a reader that keeps up gets 8 KiB per read either way).
const READ_CHUNK: usize = 64 * 1024;
/// The message buffer's first capacity (it grows to what one read and a partial message need).
const RBUF_START: usize = 16 * 1024;
/// How long a cancelled statement may take to report back before the connection is dropped.
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// Transaction state reported by the server after each operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxStatus {
    /// Not in a transaction.
    Idle,
    /// In a transaction.
    InTransaction,
    /// In a transaction that failed (only ROLLBACK is accepted).
    Failed,
}

/// Cancels whatever a connection is running, from any fiber or thread.
#[derive(Clone, Debug)]
pub struct CancelToken {
    peer: Peer,
    pid: i32,
    secret: i32,
}

impl CancelToken {
    /// Asks the server to cancel the connection's current statement (if any).
    pub fn cancel(&self) -> Result<()> {
        Ok(socket::send_cancel(&self.peer, self.pid, self.secret)?)
    }
}

/// One PostgreSQL connection at the message level: what [`Client`](super::Client) and
/// [`SharedClient`](super::SharedClient) are built on.
pub(crate) struct Connection {
    sock: Socket,
    peer: Peer,
    rbuf: BytesMut,
    /// Where socket reads land before the bytes that came join `rbuf`: `Read` fills only
    /// initialised memory, and zeroing 64 KiB of `rbuf` before each read (most bring 8 KiB)
    /// costs more than copying what arrived.
    scratch: Box<[u8]>,
    /// The value spans of the DataRow read in place, reused from row to row.
    spans: Vec<Span>,
    /// Encoded messages not written yet.
    pub(crate) wbuf: BytesMut,
    /// Backend process id (from BackendKeyData).
    pub(super) pid: i32,
    /// Backend secret key (from BackendKeyData).
    pub(super) secret: i32,
    status: TxStatus,
    broken: bool,
    server_params: HashMap<String, String>,
    /// The deadline each statement gets (`None`: no limit).
    pub(super) query_timeout: Option<Duration>,
    deadline: Option<Instant>,
    timeout_len: Duration,
    cancel_sent: bool,
    socket_timeout: Option<Duration>,
    /// Transaction nesting of the client on top (0 outside a transaction).
    pub(crate) depth: u32,
    created: Instant,
}

impl Connection {
    /// A connection on `sock` not started yet: the connect deadline is armed and no cancel
    /// is sent during startup (the deadline just fails it).
    pub(super) fn new(sock: Socket, peer: Peer, cfg: &Config, deadline: Instant) -> Connection {
        Connection {
            sock,
            peer,
            rbuf: BytesMut::with_capacity(RBUF_START),
            scratch: vec![0; READ_CHUNK].into_boxed_slice(),
            spans: Vec::new(),
            wbuf: BytesMut::with_capacity(1024),
            pid: 0,
            secret: 0,
            status: TxStatus::Idle,
            broken: false,
            server_params: HashMap::new(),
            query_timeout: cfg.query_timeout,
            deadline: Some(deadline),
            timeout_len: cfg.connect_timeout,
            cancel_sent: true,
            socket_timeout: None,
            depth: 0,
            created: Instant::now(),
        }
    }

    /// Startup is over: disarms the connect deadline and allows cancels.
    pub(super) fn started(&mut self) {
        self.deadline = None;
        self.cancel_sent = false;
    }

    // ---- state -------------------------------------------------------------------------

    /// The backend process id.
    pub(crate) fn backend_pid(&self) -> i32 {
        self.pid
    }

    /// A token that cancels this connection's running statement from elsewhere.
    pub(super) fn cancel_token(&self) -> CancelToken {
        CancelToken {
            peer: self.peer.clone(),
            pid: self.pid,
            secret: self.secret,
        }
    }

    /// The transaction state after the last operation.
    pub(super) fn tx_status(&self) -> TxStatus {
        self.status
    }

    /// Whether the connection failed and must be dropped.
    pub(crate) fn is_broken(&self) -> bool {
        self.broken
    }

    /// Whether the connection runs over TLS.
    pub(super) fn is_tls(&self) -> bool {
        self.sock.is_tls()
    }

    /// A server parameter reported at startup or since.
    pub(super) fn server_param(&self, name: &str) -> Option<&str> {
        self.server_params.get(name).map(String::as_str)
    }

    /// When the connection was opened.
    pub(super) fn created(&self) -> Instant {
        self.created
    }

    /// Sets the per-statement deadline (`None` or zero: no limit).
    pub(super) fn set_query_timeout(&mut self, t: Option<Duration>) {
        self.query_timeout = t.filter(|t| !t.is_zero());
    }

    /// The per-statement deadline in force.
    pub(super) fn query_timeout(&self) -> Option<Duration> {
        self.query_timeout
    }

    /// Whether the server closed the connection or sent something unasked while it was idle
    /// (a cheap check that never waits).
    pub(crate) fn is_closed_by_peer(&mut self) -> bool {
        if self.broken {
            return true;
        }
        match self.sock.readable_now() {
            Ok(false) => false,
            _ => {
                self.broken = true;
                true
            }
        }
    }

    /// Whether the server has sent something not read yet (never waits).
    pub(super) fn readable_now(&self) -> io::Result<bool> {
        self.sock.readable_now()
    }

    /// Records the status byte of a ReadyForQuery.
    pub(super) fn set_status(&mut self, s: u8) {
        self.status = match s {
            b'T' => TxStatus::InTransaction,
            b'E' => TxStatus::Failed,
            _ => TxStatus::Idle,
        };
        if self.status == TxStatus::Idle {
            self.depth = 0;
        }
    }

    // ---- framing -----------------------------------------------------------------------

    /// Writes the encoded messages in `wbuf`.
    pub(crate) fn flush(&mut self) -> Result<()> {
        let out = self.sock.write_all(&self.wbuf);
        self.wbuf.clear();
        out.map_err(|e| self.fail(e))
    }

    /// Marks the connection broken by `e`.
    pub(super) fn fail(&mut self, e: io::Error) -> Error {
        self.broken = true;
        Error::Io(e)
    }

    /// A protocol violation: `m` came `during` an operation that does not expect it.
    pub(super) fn unexpected(&mut self, m: &Message, during: &str) -> Error {
        self.broken = true;
        let name = match m {
            Message::DataRow(_) => "DataRow",
            Message::RowDescription(_) => "RowDescription",
            Message::CommandComplete(_) => "CommandComplete",
            Message::ReadyForQuery(_) => "ReadyForQuery",
            Message::CopyInResponse(_) => "CopyInResponse",
            Message::CopyOutResponse(_) => "CopyOutResponse",
            _ => "message",
        };
        Error::protocol(format!("unexpected {name} during {during}"))
    }

    /// The error an ErrorResponse reports (a timeout when it is our own cancel).
    pub(super) fn db_error(&mut self, fields: ErrorFields<'_>) -> Error {
        match DbError::parse(fields) {
            Ok(e) => {
                if e.severity == "FATAL" || e.severity == "PANIC" {
                    self.broken = true;
                }
                if self.cancel_sent && e.code == QUERY_CANCELED {
                    return Error::Timeout(self.timeout_len);
                }
                Error::Db(Box::new(e))
            }
            Err(e) => self.fail(e),
        }
    }

    /// The next message that matters, logging notices and recording parameter changes.
    pub(super) fn recv(&mut self) -> Result<Message> {
        loop {
            if let Some(m) = self.step()? {
                return Ok(m);
            }
        }
    }

    /// The next message that matters, or `None` when it is a DataRow, left whole at the front
    /// of the buffer for [`Connection::take_row`] to read in place.
    pub(super) fn recv_unless_row(&mut self) -> Result<Option<Message>> {
        loop {
            if self.has_message() && self.rbuf[0] == b'D' && self.front_len() >= 4 {
                return Ok(None);
            }
            if let Some(m) = self.step()? {
                return Ok(Some(m));
            }
        }
    }

    /// Hands the DataRow at the front of the buffer (see [`Connection::recv_unless_row`]) to
    /// `each` as a row of `columns`, read where it lies, and consumes it. A row that does not
    /// match `columns` is consumed too and reported as the error, not handed on.
    pub(super) fn take_row<R>(
        &mut self,
        columns: &[Column],
        each: impl FnOnce(RowRef<'_>) -> R,
    ) -> Result<R> {
        let end = 1 + self.front_len();
        self.spans.clear();
        let body = &self.rbuf[5..end];
        let out = scan(body, columns.len(), 0, &mut self.spans)
            .map(|_| each(RowRef::new(columns, body, &self.spans)));
        self.rbuf.advance(end);
        out
    }

    /// One step towards the next message: the message when it matters, `None` after a
    /// notice, a parameter change or a socket read.
    fn step(&mut self) -> Result<Option<Message>> {
        let parsed = Message::parse(&mut self.rbuf).map_err(|e| self.fail(e))?;
        match parsed {
            Some(Message::NoticeResponse(b)) => {
                if let Ok(n) = DbError::parse(b.fields()) {
                    log::info!("postgres {}: {}", n.severity, n.message);
                }
            }
            Some(Message::ParameterStatus(b)) => {
                if let (Ok(k), Ok(v)) = (b.name(), b.value()) {
                    self.server_params.insert(k.to_owned(), v.to_owned());
                }
            }
            Some(Message::NotificationResponse(_)) | Some(Message::CloseComplete) => {}
            Some(m) => return Ok(Some(m)),
            None => self.fill()?,
        }
        Ok(None)
    }

    /// Whether a whole message is already buffered (reading it will not wait on the socket).
    pub(crate) fn has_message(&self) -> bool {
        self.rbuf.len() >= 5 && self.rbuf.len() > self.front_len()
    }

    /// The length field of the message at the front of the buffer (at least 5 bytes there).
    fn front_len(&self) -> usize {
        u32::from_be_bytes([self.rbuf[1], self.rbuf[2], self.rbuf[3], self.rbuf[4]]) as usize
    }

    fn fill(&mut self) -> Result<()> {
        let timeout = match self.deadline {
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return self.on_timeout();
                }
                Some(left)
            }
            None => None,
        };
        if timeout != self.socket_timeout {
            self.sock
                .set_read_timeout(timeout)
                .map_err(|e| self.fail(e))?;
            self.socket_timeout = timeout;
        }
        match self.sock.read(&mut self.scratch) {
            Ok(0) => Err(self.fail(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ))),
            Ok(n) => {
                self.rbuf.extend_from_slice(&self.scratch[..n]);
                Ok(())
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) && self.deadline.is_some() =>
            {
                self.on_timeout()
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// The deadline passed: cancel on the server once and wait a grace period for it to
    /// report; past that the connection is dropped.
    fn on_timeout(&mut self) -> Result<()> {
        if self.cancel_sent {
            self.broken = true;
            return Err(Error::Timeout(self.timeout_len));
        }
        self.cancel_sent = true;
        log::warn!(
            "postgres statement on backend {} passed its {:?} deadline; cancelling",
            self.pid,
            self.timeout_len
        );
        if let Err(e) = socket::send_cancel(&self.peer, self.pid, self.secret) {
            log::warn!("postgres cancel request failed: {e}");
        }
        self.deadline = Some(Instant::now() + CANCEL_GRACE);
        Ok(())
    }

    /// Starts an operation: refuses a broken connection, arms the statement deadline.
    pub(crate) fn begin_op(&mut self) -> Result<()> {
        if self.broken {
            return Err(Error::Closed);
        }
        self.cancel_sent = false;
        self.deadline = self.query_timeout.map(|t| {
            self.timeout_len = t;
            Instant::now() + t
        });
        Ok(())
    }

    /// Ends an operation: disarms the statement deadline.
    pub(crate) fn end_op(&mut self) {
        self.deadline = None;
    }

    /// Reads up to ReadyForQuery, keeping the first error.
    pub(super) fn drain(&mut self, mut first: Option<Error>) -> Result<()> {
        loop {
            match self.recv() {
                Ok(Message::ReadyForQuery(b)) => {
                    self.set_status(b.status());
                    return first.map_or(Ok(()), Err);
                }
                Ok(Message::ErrorResponse(b)) => {
                    let e = self.db_error(b.fields());
                    first.get_or_insert(e);
                }
                Ok(_) => {}
                Err(e) => return Err(first.unwrap_or(e)),
            }
        }
    }
}
