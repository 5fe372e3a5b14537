//! The crate's one error type, and `.optional()` for "not found is not an error".

use std::io;

use rusqlite::ffi;
use rusqlite::types::FromSqlError;

use crate::pg;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in moria-orm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// SQLite reported an error that has no more specific variant.
    #[error("sqlite: {0}")]
    Sqlite(#[source] rusqlite::Error),
    /// PostgreSQL reported an error that has no more specific variant ([`pg::Error::code`]
    /// gives its SQLSTATE).
    #[error("{0}")]
    Postgres(#[from] pg::Error),
    /// No row has this id.
    #[error("{table}: no row with id {id}")]
    NotFound {
        /// Table searched.
        table: &'static str,
        /// Id asked for.
        id: i64,
    },
    /// A UNIQUE or PRIMARY KEY constraint refused the write.
    #[error("{table}: unique constraint violated: {message}")]
    Conflict {
        /// Table written.
        table: &'static str,
        /// SQLite's message, naming the column.
        message: String,
    },
    /// Another constraint (NOT NULL, CHECK) refused the write.
    #[error("{table}: constraint violated: {message}")]
    Constraint {
        /// Table written.
        table: &'static str,
        /// SQLite's message.
        message: String,
    },
    /// A field name (from JSON, a query or a URL) is not part of the model.
    #[error("{table}: unknown field `{field}`")]
    UnknownField {
        /// Model's table.
        table: &'static str,
        /// The offending name.
        field: String,
    },
    /// A JSON value does not fit the field's type.
    #[error("{table}.{field}: wrong type, expected {expected}")]
    WrongType {
        /// Model's table.
        table: &'static str,
        /// Field name.
        field: String,
        /// What the field accepts.
        expected: &'static str,
    },
    /// A stored column cannot be read as the field's type.
    #[error("{table}.{field}: cannot read column: {source}")]
    Column {
        /// Model's table.
        table: &'static str,
        /// Field name.
        field: &'static str,
        /// Conversion failure.
        source: FromSqlError,
    },
    /// The input is not valid JSON.
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The JSON is valid but not shaped as expected (e.g. not an object).
    #[error("unexpected JSON: {0}")]
    JsonShape(String),
    /// A raw WHERE fragment contains literals or statement separators instead of `?` bindings.
    #[error("unsafe SQL fragment {0:?}: values must be bound with `?`")]
    UnsafeSql(String),
    /// The number of `?` in a fragment differs from the number of values given.
    #[error("SQL fragment has {placeholders} `?` but {values} values were given")]
    ParamCount {
        /// `?` found.
        placeholders: usize,
        /// Values given.
        values: usize,
    },
    /// A table or column name is not a plain identifier.
    #[error("invalid identifier {0:?}")]
    InvalidName(String),
    /// The database options are inconsistent.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An I/O error, e.g. while writing JSON.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The offload pool or the connection thread could not run the call.
    #[error("offload failed: {0}")]
    Offload(String),
    /// No table of this name is served.
    #[error("no table {0:?}")]
    NoSuchTable(String),
    /// A REST request is malformed (bad id, query parameter or batch shape).
    #[error("bad request: {0}")]
    BadRequest(String),
    /// A REST request body exceeds the configured limit.
    #[error("request body of {size} bytes exceeds the limit of {limit}")]
    TooLarge {
        /// Bytes received or announced.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// A [`Db`](crate::Db) call was made from inside a closure running on the same database
    /// (it would wait for the connection its own caller holds); refused at once.
    #[error("a Db call from inside a closure on the same database (use the closure's Conn)")]
    Reentrant,
    /// The closure given to a [`Db`](crate::Db) call panicked (its transaction rolled back).
    #[error("database call panicked: {0}")]
    Panicked(String),
}

impl Error {
    /// Maps a write error: unique/primary-key violations become `Conflict`, other constraints `Constraint`.
    pub(crate) fn write(table: &'static str, err: rusqlite::Error) -> Self {
        if let rusqlite::Error::SqliteFailure(code, msg) = &err {
            if code.code == ffi::ErrorCode::ConstraintViolation {
                let message = msg.clone().unwrap_or_else(|| code.to_string());
                return match code.extended_code {
                    ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                        Error::Conflict { table, message }
                    }
                    _ => Error::Constraint { table, message },
                };
            }
        }
        Error::Sqlite(err)
    }

    /// Maps a PostgreSQL write error: SQLSTATE 23505 becomes `Conflict`, other class-23
    /// integrity violations `Constraint`.
    pub(crate) fn pg_write(table: &'static str, err: pg::Error) -> Self {
        if let Some(db) = err.as_db() {
            if db.code == pg::UNIQUE_VIOLATION {
                return Error::Conflict {
                    table,
                    message: db.to_string(),
                };
            }
            if db.code.starts_with("23") {
                return Error::Constraint {
                    table,
                    message: db.to_string(),
                };
            }
        }
        Error::Postgres(err)
    }

    /// The SQLSTATE of a database error (PostgreSQL's own; for SQLite the closest class:
    /// `23505` unique, `23000` other constraint), `None` for errors that are not the database's.
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            Error::Postgres(e) => Some(e.code()),
            Error::Conflict { .. } => Some("23505"),
            Error::Constraint { .. } => Some("23000"),
            _ => None,
        }
    }

    /// Whether the database was too busy to take the call (SQLite `SQLITE_BUSY`/`SQLITE_LOCKED`
    /// past the busy timeout, or no pooled PostgreSQL connection free in time): worth retrying.
    pub fn is_busy(&self) -> bool {
        match self {
            Error::Sqlite(rusqlite::Error::SqliteFailure(f, _)) => matches!(
                f.code,
                ffi::ErrorCode::DatabaseBusy | ffi::ErrorCode::DatabaseLocked
            ),
            Error::Postgres(pg::Error::PoolTimeout(_)) => true,
            _ => false,
        }
    }

    /// Wraps a column conversion failure with the field it belongs to.
    pub fn column(table: &'static str, field: &'static str, source: FromSqlError) -> Self {
        Error::Column {
            table,
            field,
            source,
        }
    }
}

impl From<rusqlite::Error> for Error {
    /// Wraps a SQLite error, counting busy and locked ones for the metrics.
    fn from(e: rusqlite::Error) -> Self {
        if matches!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        ) {
            crate::metrics::SQLITE_BUSY.inc();
        }
        Error::Sqlite(e)
    }
}

/// Turns `Err(NotFound)` into `Ok(None)`, like rusqlite's `OptionalExtension`.
pub trait OptionalExt<T> {
    /// `Ok(Some(v))`, `Ok(None)` for a missing row, or the other error.
    fn optional(self) -> Result<Option<T>>;
}

impl<T> OptionalExt<T> for Result<T> {
    fn optional(self) -> Result<Option<T>> {
        match self {
            Ok(v) => Ok(Some(v)),
            Err(Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }
}
