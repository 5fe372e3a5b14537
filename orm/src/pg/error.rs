//! [`Error`]: what the PostgreSQL client reports, each with a SQLSTATE ([`Error::code`]).

use std::fmt;
use std::io;

use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::ErrorFields;

/// Result alias of the client.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// SQLSTATE of a query cancelled on the server (`query_canceled`).
pub const QUERY_CANCELED: &str = "57014";
/// SQLSTATE of a unique violation.
pub const UNIQUE_VIOLATION: &str = "23505";

/// An error or notice sent by the server, with every field it gave.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DbError {
    /// `ERROR`, `FATAL`, `PANIC` (or `WARNING`, `NOTICE`… for notices).
    pub severity: String,
    /// The SQLSTATE, e.g. `23505`.
    pub code: String,
    /// The primary message.
    pub message: String,
    /// Optional detail.
    pub detail: Option<String>,
    /// Optional hint.
    pub hint: Option<String>,
    /// Table, when the error concerns one.
    pub table: Option<String>,
    /// Column, when the error concerns one.
    pub column: Option<String>,
    /// Constraint, when one was violated.
    pub constraint: Option<String>,
}

impl DbError {
    pub(crate) fn parse(mut fields: ErrorFields<'_>) -> io::Result<DbError> {
        let mut e = DbError::default();
        while let Some(f) = fields.next()? {
            let v = String::from_utf8_lossy(f.value_bytes()).into_owned();
            match f.type_() {
                b'V' => e.severity = v,
                b'S' if e.severity.is_empty() => e.severity = v,
                b'C' => e.code = v,
                b'M' => e.message = v,
                b'D' => e.detail = Some(v),
                b'H' => e.hint = Some(v),
                b't' => e.table = Some(v),
                b'c' => e.column = Some(v),
                b'n' => e.constraint = Some(v),
                _ => {}
            }
        }
        Ok(e)
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.severity, self.code, self.message)?;
        if let Some(d) = &self.detail {
            write!(f, " ({d})")?;
        }
        Ok(())
    }
}

/// Everything the client can report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with an error.
    #[error("postgres: {0}")]
    Db(Box<DbError>),
    /// The socket failed; the connection is unusable.
    #[error("postgres connection: {0}")]
    Io(#[from] io::Error),
    /// The statement outlived its deadline and was cancelled on the server.
    #[error("postgres: statement timed out after {0:?} and was cancelled")]
    Timeout(std::time::Duration),
    /// The connection broke earlier (or was closed) and cannot be used.
    #[error("postgres: connection is closed")]
    Closed,
    /// Authentication could not proceed on the client side (method refused or unsupported).
    #[error("postgres authentication: {0}")]
    Auth(String),
    /// TLS was required but refused, or the handshake failed.
    #[error("postgres TLS: {0}")]
    Tls(String),
    /// The connection string or options are invalid.
    #[error("postgres configuration: {0}")]
    Config(String),
    /// The server sent something the protocol does not allow here.
    #[error("postgres protocol: {0}")]
    Protocol(String),
    /// A value could not be converted to or from its SQL type.
    #[error("postgres conversion: {0}")]
    Conversion(String),
    /// No column of that name or index.
    #[error("postgres: no column {0}")]
    Column(String),
    /// No pooled connection was free before the acquire timeout.
    #[error("postgres pool: no connection free within {0:?}")]
    PoolTimeout(std::time::Duration),
}

impl Error {
    /// The SQLSTATE: the server's for [`Error::Db`], else the class the failure belongs to
    /// (`57014` timeout, `08006` connection failure, `08003` closed, `28000` authentication,
    /// `08001` TLS/configuration/pool, `08P01` protocol, `22000` conversion, `42703` column).
    pub fn code(&self) -> &str {
        match self {
            Error::Db(e) => &e.code,
            Error::Timeout(_) => QUERY_CANCELED,
            Error::Io(_) => "08006",
            Error::Closed => "08003",
            Error::Auth(_) => "28000",
            Error::Tls(_) | Error::Config(_) | Error::PoolTimeout(_) => "08001",
            Error::Protocol(_) => "08P01",
            Error::Conversion(_) => "22000",
            Error::Column(_) => "42703",
        }
    }

    /// The server's error, when it sent one.
    pub fn as_db(&self) -> Option<&DbError> {
        match self {
            Error::Db(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the connection that returned this error can no longer be used.
    pub fn is_fatal(&self) -> bool {
        match self {
            Error::Io(_) | Error::Closed | Error::Protocol(_) => true,
            Error::Db(e) => e.severity == "FATAL" || e.severity == "PANIC",
            _ => false,
        }
    }

    pub(crate) fn protocol(what: impl Into<String>) -> Self {
        Error::Protocol(what.into())
    }
}
