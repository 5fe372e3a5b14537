//! [`Client`]: one PostgreSQL connection, in blocking style over a moria-runtime socket.
//!
//! Startup (TLS negotiation, SCRAM-SHA-256 / MD5 / cleartext-over-TLS authentication), the
//! simple and extended query protocols with binary results, a per-connection statement cache,
//! transactions and savepoints, `COPY … FROM STDIN`, pipelines, and cancel-on-timeout.
//!
//! Every operation ends at the server's ReadyForQuery, so the connection is always in step:
//! an error half-way through a result (a row that does not convert) is reported after the rest
//! of the result has been read. An I/O error, a protocol violation or a FATAL error marks the
//! connection broken ([`Client::is_broken`]); later calls return [`Error::Closed`].

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::md5_hash;
use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};
use postgres_protocol::message::backend::Message;
use postgres_protocol::message::frontend;
use postgres_types::{ToSql, Type};

use super::cache::StmtCache;
use super::config::Config;
use super::error::{DbError, Error, Result, QUERY_CANCELED};
use super::row::{Column, Row, SimpleRow, Statement};
use super::socket::{self, Peer, Socket};

/// Bytes read from the socket at a time.
const READ_CHUNK: usize = 16 * 1024;
/// How long a cancelled statement may take to report back before the connection is dropped.
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);
/// Most parameters one statement can have (the protocol counts them in 16 bits).
pub const MAX_PARAMS: u32 = 65_535;
/// Longest statement text the server accepts (its 1 GiB message limit).
pub const MAX_STATEMENT_LEN: usize = (1 << 30) - 1024;
/// Bytes per CopyData message of [`Client::copy_in`].
const COPY_CHUNK: usize = 64 * 1024;

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

/// A parameter list: values that convert to the statement's parameter types.
pub type Params<'a> = &'a [&'a (dyn ToSql + Sync)];

/// One PostgreSQL connection. Not shared: one fiber uses it at a time (`&mut self`); use a
/// [`Pool`](super::Pool) to share connections between fibers.
pub struct Client {
    sock: Socket,
    peer: Peer,
    rbuf: BytesMut,
    /// Where socket reads land before they join `rbuf`: rows keep parts of `rbuf` alive, so
    /// reading into `rbuf` itself would allocate (and zero) a fresh chunk for every read.
    scratch: Box<[u8]>,
    pub(crate) wbuf: BytesMut,
    pid: i32,
    secret: i32,
    status: TxStatus,
    broken: bool,
    server_params: HashMap<String, String>,
    cache: StmtCache,
    next_name: u64,
    pub(crate) query_timeout: Option<Duration>,
    deadline: Option<Instant>,
    timeout_len: Duration,
    cancel_sent: bool,
    socket_timeout: Option<Duration>,
    pub(crate) depth: u32,
    created: Instant,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("pid", &self.pid)
            .field("status", &self.status)
            .field("broken", &self.broken)
            .field("tls", &self.sock.is_tls())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects with a URL or `key=value` string (see [`Config`]).
    pub fn connect(params: &str) -> Result<Client> {
        Client::connect_config(&Config::parse(params)?)
    }

    /// Connects with `cfg`: socket, TLS per `sslmode`, authentication, session parameters.
    pub fn connect_config(cfg: &Config) -> Result<Client> {
        let deadline = Instant::now() + cfg.connect_timeout;
        let (sock, peer) = socket::connect_plain(cfg, deadline)?;
        let sock = socket::negotiate_tls(cfg, sock, deadline)?;
        let mut c = Client {
            sock,
            peer,
            rbuf: BytesMut::with_capacity(READ_CHUNK),
            scratch: vec![0; READ_CHUNK].into_boxed_slice(),
            wbuf: BytesMut::with_capacity(1024),
            pid: 0,
            secret: 0,
            status: TxStatus::Idle,
            broken: false,
            server_params: HashMap::new(),
            cache: StmtCache::new(cfg.statement_cache),
            next_name: 0,
            query_timeout: cfg.query_timeout,
            deadline: Some(deadline),
            timeout_len: cfg.connect_timeout,
            cancel_sent: true, // no cancel during startup: the deadline just fails it
            socket_timeout: None,
            depth: 0,
            created: Instant::now(),
        };
        let out = c.startup(cfg);
        c.deadline = None;
        c.cancel_sent = false;
        match out {
            Ok(()) => Ok(c),
            Err(Error::Timeout(_)) => Err(Error::Io(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("connecting took longer than {:?}", cfg.connect_timeout),
            ))),
            Err(e) => Err(e),
        }
    }

    fn startup(&mut self, cfg: &Config) -> Result<()> {
        let mut params: Vec<(&str, &str)> = vec![
            ("user", &cfg.user),
            ("database", &cfg.dbname),
            ("client_encoding", "UTF8"),
        ];
        if let Some(a) = &cfg.application_name {
            params.push(("application_name", a));
        }
        if let Some(o) = &cfg.options {
            params.push(("options", o));
        }
        frontend::startup_message(params.iter().copied(), &mut self.wbuf)?;
        self.flush()?;
        self.authenticate(cfg)?;
        loop {
            match self.recv()? {
                Message::BackendKeyData(b) => {
                    self.pid = b.process_id();
                    self.secret = b.secret_key();
                }
                Message::ReadyForQuery(b) => {
                    self.set_status(b.status());
                    return Ok(());
                }
                Message::ErrorResponse(b) => return Err(self.db_error(b.fields())),
                m => return Err(self.unexpected(&m, "startup")),
            }
        }
    }

    fn password<'c>(&self, cfg: &'c Config) -> Result<&'c str> {
        cfg.password.as_deref().ok_or_else(|| {
            Error::Auth(format!(
                "the server asks for a password for user {:?} but none was given",
                cfg.user
            ))
        })
    }

    fn authenticate(&mut self, cfg: &Config) -> Result<()> {
        loop {
            match self.recv()? {
                Message::AuthenticationOk => return Ok(()),
                Message::AuthenticationCleartextPassword => {
                    if !self.sock.is_tls() {
                        return Err(Error::Auth(
                            "the server asks for a cleartext password over an unencrypted \
                             connection; refused (use TLS or SCRAM-SHA-256)"
                                .into(),
                        ));
                    }
                    let pw = self.password(cfg)?;
                    frontend::password_message(pw.as_bytes(), &mut self.wbuf)?;
                    self.flush()?;
                }
                Message::AuthenticationMd5Password(b) => {
                    let pw = self.password(cfg)?;
                    let hash = md5_hash(cfg.user.as_bytes(), pw.as_bytes(), b.salt());
                    frontend::password_message(hash.as_bytes(), &mut self.wbuf)?;
                    self.flush()?;
                }
                Message::AuthenticationSasl(b) => {
                    let mut mechanisms = b.mechanisms();
                    let mut scram = false;
                    while let Some(m) = mechanisms.next()? {
                        scram |= m == SCRAM_SHA_256;
                    }
                    if !scram {
                        return Err(Error::Auth(
                            "the server offers no supported SASL mechanism".into(),
                        ));
                    }
                    let pw = self.password(cfg)?;
                    self.scram(pw)?;
                }
                Message::ErrorResponse(b) => return Err(self.db_error(b.fields())),
                Message::AuthenticationKerberosV5
                | Message::AuthenticationScmCredential
                | Message::AuthenticationGss
                | Message::AuthenticationSspi => {
                    return Err(Error::Auth(
                        "the server asks for an unsupported authentication method".into(),
                    ))
                }
                m => return Err(self.unexpected(&m, "authentication")),
            }
        }
    }

    fn scram(&mut self, password: &str) -> Result<()> {
        let mut scram = ScramSha256::new(password.as_bytes(), ChannelBinding::unsupported());
        frontend::sasl_initial_response(SCRAM_SHA_256, scram.message(), &mut self.wbuf)?;
        self.flush()?;
        match self.recv()? {
            Message::AuthenticationSaslContinue(b) => scram
                .update(b.data())
                .map_err(|e| Error::Auth(format!("SCRAM: {e}")))?,
            Message::ErrorResponse(b) => return Err(self.db_error(b.fields())),
            m => return Err(self.unexpected(&m, "SCRAM")),
        }
        frontend::sasl_response(scram.message(), &mut self.wbuf)?;
        self.flush()?;
        match self.recv()? {
            Message::AuthenticationSaslFinal(b) => scram
                .finish(b.data())
                .map_err(|e| Error::Auth(format!("SCRAM: the server's proof is wrong: {e}"))),
            Message::ErrorResponse(b) => Err(self.db_error(b.fields())),
            m => Err(self.unexpected(&m, "SCRAM")),
        }
    }

    // ---- state -------------------------------------------------------------------------

    /// The backend process id (what `pg_backend_pid()` returns on this connection).
    pub fn backend_pid(&self) -> i32 {
        self.pid
    }

    /// A token that cancels this connection's running statement from elsewhere.
    pub fn cancel_token(&self) -> CancelToken {
        CancelToken {
            peer: self.peer.clone(),
            pid: self.pid,
            secret: self.secret,
        }
    }

    /// The transaction state after the last operation.
    pub fn tx_status(&self) -> TxStatus {
        self.status
    }

    /// Whether the connection failed and must be dropped.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Whether the connection runs over TLS.
    pub fn is_tls(&self) -> bool {
        self.sock.is_tls()
    }

    /// A server parameter reported at startup or since (`server_version`, `TimeZone`, …).
    pub fn server_param(&self, name: &str) -> Option<&str> {
        self.server_params.get(name).map(String::as_str)
    }

    /// When the connection was opened.
    pub fn created(&self) -> Instant {
        self.created
    }

    /// The deadline given to each statement from now on (`None`: no limit). Past it the
    /// statement is cancelled on the server and the call returns [`Error::Timeout`].
    pub fn set_query_timeout(&mut self, t: Option<Duration>) {
        self.query_timeout = t.filter(|t| !t.is_zero());
    }

    /// The per-statement deadline in force.
    pub fn query_timeout(&self) -> Option<Duration> {
        self.query_timeout
    }

    /// Whether the server closed the connection or sent something unasked while it was idle
    /// (a cheap check that never waits; a pool runs it on every checkout).
    pub fn is_closed_by_peer(&mut self) -> bool {
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

    fn set_status(&mut self, s: u8) {
        self.status = match s {
            b'T' => TxStatus::InTransaction,
            b'E' => TxStatus::Failed,
            _ => TxStatus::Idle,
        };
        if self.status == TxStatus::Idle {
            self.depth = 0;
        }
    }

    // ---- wire --------------------------------------------------------------------------

    pub(crate) fn flush(&mut self) -> Result<()> {
        let out = self.sock.write_all(&self.wbuf);
        self.wbuf.clear();
        out.map_err(|e| self.fail(e))
    }

    fn fail(&mut self, e: io::Error) -> Error {
        self.broken = true;
        Error::Io(e)
    }

    fn unexpected(&mut self, m: &Message, during: &str) -> Error {
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

    fn db_error(&mut self, fields: postgres_protocol::message::backend::ErrorFields<'_>) -> Error {
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
    pub(crate) fn recv(&mut self) -> Result<Message> {
        loop {
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
                Some(m) => return Ok(m),
                None => self.fill()?,
            }
        }
    }

    /// Whether a whole message is already buffered (reading it will not wait on the socket).
    pub(crate) fn has_message(&self) -> bool {
        self.rbuf.len() >= 5
            && self.rbuf.len()
                > u32::from_be_bytes([self.rbuf[1], self.rbuf[2], self.rbuf[3], self.rbuf[4]])
                    as usize
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

    pub(crate) fn end_op(&mut self) {
        self.deadline = None;
    }

    /// Reads up to ReadyForQuery, keeping the first error.
    pub(crate) fn drain(&mut self, mut first: Option<Error>) -> Result<()> {
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

    // ---- simple protocol ---------------------------------------------------------------

    /// Runs one or more `;`-separated statements with the simple protocol (no parameters, no
    /// results): DDL, `SET`, `BEGIN`… Stops at the first error.
    pub fn batch_execute(&mut self, sql: &str) -> Result<()> {
        self.simple_query_each(sql, &mut |_| Ok(()))
    }

    /// Runs `sql` with the simple protocol and returns every row as text.
    pub fn simple_query(&mut self, sql: &str) -> Result<Vec<SimpleRow>> {
        let mut out = Vec::new();
        self.simple_query_each(sql, &mut |r| {
            out.push(r);
            Ok(())
        })?;
        Ok(out)
    }

    fn simple_query_each(
        &mut self,
        sql: &str,
        each: &mut dyn FnMut(SimpleRow) -> Result<()>,
    ) -> Result<()> {
        self.begin_op()?;
        let out = self.simple_inner(sql, each);
        self.end_op();
        out
    }

    fn simple_inner(
        &mut self,
        sql: &str,
        each: &mut dyn FnMut(SimpleRow) -> Result<()>,
    ) -> Result<()> {
        check_size(sql)?;
        frontend::query(sql, &mut self.wbuf)?;
        self.flush()?;
        let mut names: Arc<[String]> = Arc::from(Vec::new());
        let mut first = None;
        loop {
            match self.recv()? {
                Message::RowDescription(b) => {
                    names = b
                        .fields()
                        .map(|f| Ok(f.name().to_owned()))
                        .collect::<Vec<_>>()
                        .map_err(|e| self.fail(e))?
                        .into();
                }
                Message::DataRow(b) => {
                    if first.is_none() {
                        let values = text_values(&b).map_err(|e| self.fail(e))?;
                        let row = SimpleRow {
                            columns: names.clone(),
                            values,
                        };
                        if let Err(e) = each(row) {
                            first = Some(e);
                        }
                    }
                }
                Message::CommandComplete(_) | Message::EmptyQueryResponse => {}
                Message::ErrorResponse(b) => {
                    let e = self.db_error(b.fields());
                    first.get_or_insert(e);
                }
                Message::ReadyForQuery(b) => {
                    self.set_status(b.status());
                    return first.map_or(Ok(()), Err);
                }
                Message::CopyInResponse(_) => {
                    frontend::copy_fail("COPY FROM STDIN needs Client::copy_in", &mut self.wbuf)?;
                    self.flush()?;
                }
                Message::CopyOutResponse(_) | Message::CopyData(_) | Message::CopyDone => {}
                m => return Err(self.unexpected(&m, "a simple query")),
            }
        }
    }

    // ---- extended protocol -------------------------------------------------------------

    /// Prepares `sql` (with `$1`, `$2`… placeholders) on the server, uncached.
    pub fn prepare(&mut self, sql: &str) -> Result<Statement> {
        self.begin_op()?;
        let name = self.new_name();
        let out = self.prepare_inner(&name, sql);
        self.end_op();
        out
    }

    /// The cached statement for `sql`, prepared on first use. The cache keeps
    /// [`Config::statement_cache`] statements and closes the least recently used past that.
    pub fn prepare_cached(&mut self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.cached(sql) {
            return Ok(s);
        }
        let stmt = self.prepare(sql)?;
        self.cache_insert(sql, &stmt)?;
        Ok(stmt)
    }

    /// The cached statement for `sql`, if any (marking it used).
    pub(crate) fn cached(&mut self, sql: &str) -> Option<Statement> {
        self.cache.get(sql)
    }

    pub(crate) fn cache_insert(&mut self, sql: &str, stmt: &Statement) -> Result<()> {
        self.cache.insert(sql, stmt, &mut self.wbuf)
    }

    /// Number of statements in the cache.
    pub fn cached_statements(&self) -> usize {
        self.cache.len()
    }

    pub(crate) fn new_name(&mut self) -> String {
        self.next_name += 1;
        format!("moria_s{}", self.next_name)
    }

    fn prepare_inner(&mut self, name: &str, sql: &str) -> Result<Statement> {
        self.write_prepare(name, sql)?;
        frontend::sync(&mut self.wbuf);
        self.flush()?;
        self.read_prepare_reply(name)
    }

    /// Reads the whole answer to Parse/Describe/Sync, up to and including ReadyForQuery.
    pub(crate) fn read_prepare_reply(&mut self, name: &str) -> Result<Statement> {
        match self.read_prepare(name) {
            Ok(s) => self.drain(None).map(|_| s),
            Err(e) if self.broken => Err(e),
            Err(e) => Err(self.drain(Some(e)).err().unwrap_or(Error::Closed)),
        }
    }

    pub(crate) fn write_prepare(&mut self, name: &str, sql: &str) -> Result<()> {
        encode_prepare(&mut self.wbuf, name, sql)
    }

    /// Reads ParseComplete, ParameterDescription and RowDescription/NoData (not the
    /// ReadyForQuery that follows).
    fn read_prepare(&mut self, name: &str) -> Result<Statement> {
        let mut params: Vec<Type> = Vec::new();
        loop {
            match self.recv()? {
                Message::ParseComplete => {}
                Message::ParameterDescription(b) => {
                    params = b
                        .parameters()
                        .map(|oid| Ok(type_of(oid)))
                        .collect()
                        .map_err(|e| self.fail(e))?;
                }
                Message::RowDescription(b) => {
                    let columns: Vec<Column> = b
                        .fields()
                        .map(|f| Ok(Column::new(f.name().to_owned(), type_of(f.type_oid()))))
                        .collect()
                        .map_err(|e| self.fail(e))?;
                    return Ok(statement(name, params, columns));
                }
                Message::NoData => return Ok(statement(name, params, Vec::new())),
                Message::ErrorResponse(b) => return Err(self.db_error(b.fields())),
                m => return Err(self.unexpected(&m, "prepare")),
            }
        }
    }

    /// Writes Bind + Execute (+ Sync) for `stmt` with `params`; nothing is written on error.
    pub(crate) fn write_execute(&mut self, stmt: &Statement, params: Params<'_>) -> Result<()> {
        encode_execute(&mut self.wbuf, stmt, params)
    }

    /// Reads one Bind/Execute/Sync result: rows to `each`, the affected count returned.
    pub(crate) fn read_execute(
        &mut self,
        columns: &Arc<[Column]>,
        each: &mut dyn FnMut(Row) -> Result<()>,
    ) -> Result<u64> {
        let mut first: Option<Error> = None;
        let mut affected = 0;
        loop {
            match self.recv()? {
                Message::BindComplete | Message::EmptyQueryResponse => {}
                Message::DataRow(b) => {
                    if first.is_none() {
                        match Row::new(columns.clone(), b) {
                            Ok(row) => {
                                if let Err(e) = each(row) {
                                    first = Some(e);
                                }
                            }
                            Err(e) => first = Some(e),
                        }
                    }
                }
                Message::CommandComplete(b) => {
                    affected = b
                        .tag()
                        .ok()
                        .and_then(|t| t.rsplit(' ').next())
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0);
                }
                Message::PortalSuspended => {}
                Message::ErrorResponse(b) => {
                    let e = self.db_error(b.fields());
                    first.get_or_insert(e);
                }
                Message::ReadyForQuery(b) => {
                    self.set_status(b.status());
                    return first.map_or(Ok(affected), Err);
                }
                m => return Err(self.unexpected(&m, "a query")),
            }
        }
    }

    /// Runs a prepared statement, handing each row to `each`; returns the affected-row count.
    pub fn query_each(
        &mut self,
        stmt: &Statement,
        params: Params<'_>,
        each: &mut dyn FnMut(Row) -> Result<()>,
    ) -> Result<u64> {
        self.begin_op()?;
        let out = self
            .write_execute(stmt, params)
            .and_then(|_| self.flush())
            .and_then(|_| self.read_execute(&stmt.columns, each));
        self.end_op();
        out
    }

    /// Runs `sql` (cached statement) and collects its rows.
    pub fn query(&mut self, sql: &str, params: Params<'_>) -> Result<Vec<Row>> {
        let stmt = self.prepare_cached(sql)?;
        let mut rows = Vec::new();
        self.query_each(&stmt, params, &mut |r| {
            rows.push(r);
            Ok(())
        })?;
        Ok(rows)
    }

    /// Runs `sql` and returns its only row; an error when there are none or several.
    pub fn query_one(&mut self, sql: &str, params: Params<'_>) -> Result<Row> {
        let mut rows = self.query(sql, params)?;
        match rows.len() {
            1 => Ok(rows.remove(0)),
            n => Err(Error::Conversion(format!("expected one row, got {n}"))),
        }
    }

    /// Runs `sql` and returns its first row, if any.
    pub fn query_opt(&mut self, sql: &str, params: Params<'_>) -> Result<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// Runs `sql` (cached statement) and returns the number of rows it affected.
    pub fn execute(&mut self, sql: &str, params: Params<'_>) -> Result<u64> {
        let stmt = self.prepare_cached(sql)?;
        self.query_each(&stmt, params, &mut |_| Ok(()))
    }

    // ---- COPY --------------------------------------------------------------------------

    /// Runs `COPY … FROM STDIN` with the bytes of `data` (text, CSV or binary, as the
    /// statement says); returns the rows copied. A read error aborts the COPY on the server.
    pub fn copy_in(&mut self, sql: &str, data: &mut dyn Read) -> Result<u64> {
        self.begin_op()?;
        let out = self.copy_in_inner(sql, data);
        self.end_op();
        out
    }

    fn copy_in_inner(&mut self, sql: &str, data: &mut dyn Read) -> Result<u64> {
        frontend::query(sql, &mut self.wbuf)?;
        self.flush()?;
        match self.recv()? {
            Message::CopyInResponse(_) => {}
            Message::ErrorResponse(b) => {
                let e = self.db_error(b.fields());
                return self.drain(Some(e)).map(|_| 0);
            }
            m => return Err(self.unexpected(&m, "COPY")),
        }
        let mut chunk = vec![0u8; COPY_CHUNK];
        let mut failed = None;
        loop {
            match data.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    frontend::CopyData::new(&chunk[..n])?.write(&mut self.wbuf);
                    self.flush()?;
                    // An error from the server (bad row) arrives while we send: stop early.
                    if self.sock.readable_now().unwrap_or(false) {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        match &failed {
            Some(e) => frontend::copy_fail(&e.to_string(), &mut self.wbuf)?,
            None => frontend::copy_done(&mut self.wbuf),
        }
        self.flush()?;
        let mut rows = 0;
        let mut first = failed.map(Error::Io);
        loop {
            match self.recv()? {
                Message::CommandComplete(b) => {
                    rows = b
                        .tag()
                        .ok()
                        .and_then(|t| t.rsplit(' ').next())
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0);
                }
                Message::ErrorResponse(b) => {
                    let e = self.db_error(b.fields());
                    first.get_or_insert(e);
                }
                Message::ReadyForQuery(b) => {
                    self.set_status(b.status());
                    return first.map_or(Ok(rows), Err);
                }
                m => return Err(self.unexpected(&m, "COPY")),
            }
        }
    }

    // ---- transactions ------------------------------------------------------------------

    /// Opens a transaction, or a savepoint inside an open one; rolls back when dropped
    /// without [`Transaction::commit`].
    pub fn transaction(&mut self) -> Result<Transaction<'_>> {
        let level = self.depth + 1;
        if level == 1 {
            self.batch_execute("BEGIN")?;
        } else {
            self.batch_execute(&format!("SAVEPOINT moria_sp{level}"))?;
        }
        self.depth = level;
        Ok(Transaction {
            client: self,
            level,
            done: false,
        })
    }

    /// Closes the connection politely (Terminate).
    pub fn close(mut self) -> Result<()> {
        frontend::terminate(&mut self.wbuf);
        self.flush()
    }
}

/// Appends Parse + Describe for `sql` as statement `name` (no Sync).
pub(crate) fn encode_prepare(buf: &mut BytesMut, name: &str, sql: &str) -> Result<()> {
    check_size(sql)?;
    frontend::parse(name, sql, std::iter::empty(), buf)?;
    frontend::describe(b'S', name, buf)?;
    Ok(())
}

/// Appends Bind + Execute + Sync for `stmt` with `params`; nothing is appended on error.
pub(crate) fn encode_execute(
    buf: &mut BytesMut,
    stmt: &Statement,
    params: Params<'_>,
) -> Result<()> {
    if params.len() != stmt.params.len() {
        return Err(Error::Conversion(format!(
            "the statement has {} parameters but {} values were given",
            stmt.params.len(),
            params.len()
        )));
    }
    let mark = buf.len();
    let bound = frontend::bind(
        "",
        &stmt.name,
        Some(1),
        params.iter().zip(stmt.params.iter()),
        |(p, ty), buf| match p.to_sql_checked(ty, buf)? {
            postgres_types::IsNull::Yes => Ok(postgres_protocol::IsNull::Yes),
            postgres_types::IsNull::No => Ok(postgres_protocol::IsNull::No),
        },
        Some(1),
        buf,
    );
    if let Err(e) = bound {
        buf.truncate(mark);
        return Err(match e {
            frontend::BindError::Conversion(e) => Error::Conversion(e.to_string()),
            frontend::BindError::Serialization(e) => Error::Conversion(e.to_string()),
        });
    }
    frontend::execute("", 0, buf)?;
    frontend::sync(buf);
    Ok(())
}

/// Refuses statements the protocol cannot carry: more than [`MAX_PARAMS`] parameters, or
/// text over [`MAX_STATEMENT_LEN`].
fn check_size(sql: &str) -> Result<()> {
    if sql.len() > MAX_STATEMENT_LEN {
        return Err(Error::Conversion(format!(
            "statement of {} bytes exceeds the protocol's {MAX_STATEMENT_LEN}",
            sql.len()
        )));
    }
    let b = sql.as_bytes();
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'$', &b[i..]) {
        i += k + 1;
        let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits > 5
            || (digits == 5
                && std::str::from_utf8(&b[i..i + 5])
                    .ok()
                    .and_then(|d| d.parse::<u32>().ok())
                    .is_some_and(|n| n > MAX_PARAMS))
        {
            return Err(Error::Conversion(format!(
                "statement uses more than the protocol's {MAX_PARAMS} parameters"
            )));
        }
        i += digits;
    }
    Ok(())
}

fn statement(name: &str, params: Vec<Type>, columns: Vec<Column>) -> Statement {
    Statement {
        name: name.into(),
        params: params.into(),
        columns: columns.into(),
    }
}

fn type_of(oid: u32) -> Type {
    Type::from_oid(oid).unwrap_or(Type::UNKNOWN)
}

fn text_values(
    b: &postgres_protocol::message::backend::DataRowBody,
) -> io::Result<Vec<Option<String>>> {
    let buf = b.buffer();
    b.ranges()
        .map(|r| Ok(r.map(|r| String::from_utf8_lossy(&buf[r]).into_owned())))
        .collect()
}

/// A transaction (or savepoint) on a [`Client`]; derefs to the client.
#[must_use = "a transaction rolls back when dropped"]
pub struct Transaction<'c> {
    client: &'c mut Client,
    level: u32,
    done: bool,
}

impl Transaction<'_> {
    /// Makes the changes permanent (or part of the enclosing level).
    pub fn commit(mut self) -> Result<()> {
        self.done = true;
        let sql = if self.level == 1 {
            "COMMIT".to_owned()
        } else {
            format!("RELEASE moria_sp{}", self.level)
        };
        let out = self.client.batch_execute(&sql);
        self.client.depth = self.level - 1;
        out
    }

    /// Undoes the changes of this level.
    pub fn rollback(mut self) -> Result<()> {
        self.done = true;
        self.undo()
    }

    fn undo(&mut self) -> Result<()> {
        if self.client.broken {
            return Ok(());
        }
        let out = if self.level == 1 {
            self.client.batch_execute("ROLLBACK")
        } else {
            let sp = self.level;
            self.client
                .batch_execute(&format!("ROLLBACK TO moria_sp{sp}; RELEASE moria_sp{sp}"))
        };
        self.client.depth = self.level - 1;
        out
    }
}

impl std::ops::Deref for Transaction<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.client
    }
}

impl std::ops::DerefMut for Transaction<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        self.client
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let Err(e) = self.undo() {
                log::error!("postgres rollback failed: {e}");
            }
        }
    }
}
