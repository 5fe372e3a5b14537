//! [`Client`]: one PostgreSQL connection, in blocking style over a moria-runtime socket.
//!
//! The client owns a [`Connection`] (the framed socket, see `connection`) and its statement
//! cache; its operations live one file each: `prepare`, `query`, `simple_query`, `copy_in`,
//! `transaction`, and `pipeline`.
//!
//! Every operation ends at the server's ReadyForQuery, so the connection is always in step:
//! an error half-way through a result (a row that does not convert) is reported after the rest
//! of the result has been read. An I/O error, a protocol violation or a FATAL error marks the
//! connection broken ([`Client::is_broken`]); later calls return [`Error::Closed`](super::Error::Closed).

use std::time::{Duration, Instant};

use postgres_protocol::message::frontend;

use super::cache::StmtCache;
use super::config::Config;
use super::connect_raw::connect_raw;
use super::connection::{CancelToken, Connection, TxStatus};
use super::error::Result;

/// One PostgreSQL connection. Not shared: one fiber uses it at a time (`&mut self`); use a
/// [`Pool`](super::Pool) to share connections between fibers.
pub struct Client {
    /// The framed socket.
    pub(crate) conn: Connection,
    /// Prepared statements by SQL text.
    pub(super) cache: StmtCache,
    /// The number in the last statement name handed out.
    pub(super) next_name: u64,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("pid", &self.conn.backend_pid())
            .field("status", &self.conn.tx_status())
            .field("broken", &self.conn.is_broken())
            .field("tls", &self.conn.is_tls())
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
        Ok(Client {
            conn: connect_raw(cfg)?,
            cache: StmtCache::new(cfg.statement_cache),
            next_name: 0,
        })
    }

    /// The backend process id (what `pg_backend_pid()` returns on this connection).
    pub fn backend_pid(&self) -> i32 {
        self.conn.backend_pid()
    }

    /// A token that cancels this connection's running statement from elsewhere.
    pub fn cancel_token(&self) -> CancelToken {
        self.conn.cancel_token()
    }

    /// The transaction state after the last operation.
    pub fn tx_status(&self) -> TxStatus {
        self.conn.tx_status()
    }

    /// Whether the connection failed and must be dropped.
    pub fn is_broken(&self) -> bool {
        self.conn.is_broken()
    }

    /// Whether the connection runs over TLS.
    pub fn is_tls(&self) -> bool {
        self.conn.is_tls()
    }

    /// A server parameter reported at startup or since (`server_version`, `TimeZone`, …).
    pub fn server_param(&self, name: &str) -> Option<&str> {
        self.conn.server_param(name)
    }

    /// When the connection was opened.
    pub fn created(&self) -> Instant {
        self.conn.created()
    }

    /// The deadline given to each statement from now on (`None`: no limit). Past it the
    /// statement is cancelled on the server and the call returns
    /// [`Error::Timeout`](super::Error::Timeout).
    pub fn set_query_timeout(&mut self, t: Option<Duration>) {
        self.conn.set_query_timeout(t);
    }

    /// The per-statement deadline in force.
    pub fn query_timeout(&self) -> Option<Duration> {
        self.conn.query_timeout()
    }

    /// Whether the server closed the connection or sent something unasked while it was idle
    /// (a cheap check that never waits; a pool runs it on every checkout).
    pub fn is_closed_by_peer(&mut self) -> bool {
        self.conn.is_closed_by_peer()
    }

    /// Closes the connection politely (Terminate).
    pub fn close(mut self) -> Result<()> {
        frontend::terminate(&mut self.conn.wbuf);
        self.conn.flush()
    }
}
