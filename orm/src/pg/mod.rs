//! A PostgreSQL client for fibers: blocking-style code over moria-runtime sockets, the wire
//! protocol through `postgres-protocol` (message codec, SCRAM) and values through
//! `postgres-types`. No async runtime anywhere.
//!
//! | module | what lives there |
//! |---|---|
//! | `config` | [`Config`]: URL / `key=value` / `PG*` environment, [`SslMode`], [`Host`] |
//! | `socket` | TCP, Unix socket or TLS (moria-crypto) transport; cancel requests |
//! | `connection` | the framed connection under both clients: send, receive, server errors, [`TxStatus`], deadlines and [`CancelToken`] |
//! | `codec` | encoding Parse/Describe and Bind/Execute/Sync, the protocol's size limits, [`Params`] |
//! | `connect_raw` | opening a connection: socket, TLS, startup, authentication (SCRAM, MD5, cleartext over TLS) |
//! | `client` | [`Client`]: one connection for one fiber at a time, its state and statement cache |
//! | `prepare` | [`Client::prepare`], [`Client::prepare_cached`], reading a prepare's answer |
//! | `query` | [`Client::query`], [`Client::execute`]…: the extended protocol, reading a result |
//! | `simple_query` | [`Client::batch_execute`], [`Client::simple_query`]: the simple protocol |
//! | `copy_in` | [`Client::copy_in`]: `COPY … FROM STDIN` |
//! | `transaction` | [`Transaction`]: transactions and savepoints on a [`Client`] |
//! | `pipeline` | [`Pipeline`]: N statements in one round trip |
//! | `shared` | [`SharedClient`]: one connection many fibers use at once, statements pipelined |
//! | `cache` | the per-connection statement cache (LRU) both clients use |
//! | `pool` | [`Pool`] of [`PooledClient`]s (exclusive) and [`SharedClient`]s, [`PoolOptions`] |
//! | `row` | [`Column`], [`Statement`], [`RowIndex`], [`SimpleRow`] |
//! | `rows` | [`Row`] (`row.get::<i64>("id")`), [`RowRef`] (a row read in place), [`RowSet`] (a result in one buffer) |
//! | `error` | [`Error`] with a SQLSTATE on every variant, [`DbError`] |
//! | `testing` | [`TestServer`]: a throwaway PostgreSQL for tests and benches (feature `test-server`, on by default) |
//!
//! ```no_run
//! use moria_orm::pg::Client;
//! let mut c = Client::connect("postgres://app:secret@localhost/shop")?;
//! c.batch_execute("CREATE TABLE IF NOT EXISTS t(id bigint PRIMARY KEY, name text)")?;
//! c.execute("INSERT INTO t VALUES ($1, $2)", &[&1i64, &"one"])?;
//! let row = c.query_one("SELECT id, name FROM t WHERE id = $1", &[&1i64])?;
//! let name: String = row.get("name")?;
//! # Ok::<(), moria_orm::pg::Error>(())
//! ```

mod cache;
mod client;
mod codec;
mod config;
mod connect_raw;
mod connection;
mod copy_in;
mod error;
mod pipeline;
mod pool;
mod prepare;
mod query;
mod row;
mod rows;
mod shared;
mod simple_query;
mod socket;
#[cfg(feature = "test-server")]
mod testing;
mod transaction;

pub use client::Client;
pub use codec::{Params, MAX_PARAMS, MAX_STATEMENT_LEN};
pub use config::{
    Config, Host, SslMode, DEFAULT_CONNECT_TIMEOUT, DEFAULT_PORT, DEFAULT_STATEMENT_CACHE,
};
pub use connection::{CancelToken, TxStatus, CANCEL_GRACE};
pub use error::{DbError, Error, Result, QUERY_CANCELED, UNIQUE_VIOLATION};
pub use pipeline::Pipeline;
pub use pool::{
    Pool, PoolOptions, PooledClient, DEFAULT_ACQUIRE_TIMEOUT, DEFAULT_CHECK_AFTER_IDLE,
    DEFAULT_MAX_LIFETIME, DEFAULT_PIPELINED, DEFAULT_POOL_SIZE, DEFAULT_SHARED_FILL, MAX_POOL_SIZE,
};
pub use row::{Column, RowIndex, SimpleRow, Statement};
pub use rows::{Row, RowRef, RowSet};
pub use shared::{SharedClient, MAX_IN_FLIGHT_BYTES};
#[cfg(feature = "test-server")]
pub use testing::TestServer;
pub use transaction::Transaction;

/// The postgres-types crate: [`ToSql`](postgres_types::ToSql), [`FromSql`](postgres_types::FromSql), [`Type`](postgres_types::Type).
pub use postgres_types as types;
