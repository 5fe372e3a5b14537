//! moria-orm: models on SQLite and PostgreSQL, after mORMot's ORM, in blocking-style Rust.
//!
//! | module | what lives there |
//! |---|---|
//! | `model` | [`Model`] trait and the [`model!`] macro that declares a table |
//! | `field` | [`Field`]: Rust type ↔ column ↔ JSON; [`CreateTime`], [`ModTime`] |
//! | `db` | [`Db`]: the fiber-side handle ([`DbBuilder`]), `Db::open("app.db")` or `Db::open("postgres://…")` |
//! | `dispatch` | [`Dispatch`]: connection threads, offload-pool jobs, or inline (memory only); PostgreSQL: on the fiber, single statements pipelined on shared connections, transactions on pooled ones |
//! | `conn` | [`Conn`]: one SQLite or PostgreSQL connection, the synchronous core ([`Mode`], [`ConnOptions`], [`Backend`]) |
//! | `exec` | the two engines side by side: PostgreSQL parameters, `?` to `$n`, the type mapping table |
//! | `row_values` | [`RowValues`]: a row read as SQLite values on either engine |
//! | [`pg`] | the fiber-native PostgreSQL client: [`pg::Client`], [`pg::SharedClient`], [`pg::Pool`], pipelines, COPY, [`pg::TestServer`] (feature `test-server`, on by default) |
//! | `schema` | create tables, add missing columns and indexes |
//! | `crud` | add / get / update / delete / count / exists on a `Conn` |
//! | `query` | [`Query`]: filters with bound values, order, limit, offset, select |
//! | `cursor` | [`Select`] and [`Cursor`]: stream rows without loading them all; each row handed on as it is read (`Db::list`, JSON) |
//! | `batch` | [`Batch`]: multi-row INSERTs in one all-or-nothing transaction |
//! | `tx` | [`Transaction`]: commit, roll back on drop, savepoints when nested |
//! | [`rest`] | REST over a `Db`: [`Rest`] (a moria-http `Handler`, mounted with `Rest::routes`), ORM errors as `HttpError`, the mORMot error renderer (feature `rest`, on by default; auth is moria-http's layers) |
//! | `json` | rows and models to JSON (expanded or compact), models from JSON |
//! | `sql` | SQL text per model, identifier quoting |
//! | `metrics` | statements and durations by backend, pool waits and timeouts, shared-connection queue depth, SQLite busy errors (moria-runtime's registry) |
//! | `error` | [`Error`], [`Result`], [`OptionalExt`] |
//!
//! ```
//! use moria_orm::{model, Conn, Mode, Query};
//! model! {
//!     pub struct Note { pub title: String [unique], pub stars: i64 }
//! }
//! let c = Conn::open(":memory:", Mode::Memory)?;
//! c.ensure_schema::<Note>()?;
//! let id = c.add(&mut Note { title: "hello".into(), stars: 3, ..Default::default() })?;
//! let n: Note = c.get(id)?;
//! assert_eq!(n.stars, 3);
//! assert_eq!(c.count::<Note>(&Query::new().filter("stars", moria_orm::Op::Gt, 2))?, 1);
//! # Ok::<(), moria_orm::Error>(())
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod batch;
mod conn;
mod crud;
mod cursor;
mod db;
mod dispatch;
mod error;
mod exec;
mod field;
mod json;
mod metrics;
mod model;
pub mod pg;
mod query;
#[cfg(feature = "rest")]
pub mod rest;
mod row_values;
mod schema;
mod sql;
mod tx;

pub use batch::Batch;
pub use conn::{
    Backend, Conn, ConnOptions, Mode, DEFAULT_BATCH_PARAMS, DEFAULT_BUSY_TIMEOUT,
    DEFAULT_PAGE_CACHE, DEFAULT_PG_BATCH_PARAMS, DEFAULT_STATEMENT_CACHE,
};
pub use cursor::{Cursor, Select};
pub use db::{is_postgres_url, Db, DbBuilder, DEFAULT_FILE_DISPATCH, MAX_READERS};
pub use dispatch::Dispatch;
pub use error::{Error, OptionalExt, Result};
pub use field::{now_millis, Auto, CreateTime, Field, FieldDef, FieldType, ModTime};
pub use json::{from_json, merge_json, merge_json_value, to_json, write_model, JsonFormat};
pub use model::Model;
pub use query::{Op, Order, Query};
#[cfg(feature = "rest")]
pub use rest::{Rest, RestRequest, RestResponse};
#[doc(hidden)]
pub use row_values::RowValues;
#[doc(hidden)]
pub use sql::SqlTexts;
pub use tx::Transaction;

/// The rusqlite crate, for raw SQL through [`Conn::sqlite`] and for the `model!` macro.
pub use rusqlite;
/// The serde_json crate, used by the `model!` macro.
#[doc(hidden)]
pub use serde_json;
