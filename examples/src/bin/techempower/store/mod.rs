//! The database behind the handlers: one enum over the two backends.
//!
//! | module | backend |
//! |---|---|
//! | `sqlite` | SQLite through moria-orm models and a `Db` |
//! | `pg` | PostgreSQL through `moria_orm::pg::Pool`, N reads pipelined into one round trip |

mod pg;
mod sqlite;

use moria_http::BoxError;
use moria_orm::pg::PoolOptions;

use crate::fortune::Fortune;
use crate::world::World;

/// What a store call returns.
pub type Result<T> = std::result::Result<T, BoxError>;

/// A TFB database.
pub enum Store {
    /// A SQLite file or `:memory:`.
    Sqlite(sqlite::SqliteStore),
    /// A PostgreSQL server.
    Postgres(pg::PgStore),
}

impl Store {
    /// Opens `target` (a `postgres://` URL, `:memory:` or a SQLite path); `pool` configures
    /// the PostgreSQL pool.
    pub fn open(target: &str, pool: PoolOptions) -> Result<Store> {
        Ok(if moria_orm::is_postgres_url(target) {
            Store::Postgres(pg::PgStore::open(target, pool)?)
        } else {
            Store::Sqlite(sqlite::SqliteStore::open(target)?)
        })
    }

    /// Whether the data lives only in this process (and must be filled at start).
    pub fn is_memory(&self) -> bool {
        matches!(self, Store::Sqlite(s) if s.is_memory())
    }

    /// Drops, creates and fills World (10,000 rows) and Fortune (the 12 standard rows).
    pub fn init(&self) -> Result<()> {
        match self {
            Store::Sqlite(s) => s.init(),
            Store::Postgres(s) => s.init(),
        }
    }

    /// The World row `id`.
    pub fn world(&self, id: i32) -> Result<World> {
        match self {
            Store::Sqlite(s) => s.world(id),
            Store::Postgres(s) => s.world(id),
        }
    }

    /// The World rows of `ids`, one query each, in order.
    pub fn worlds(&self, ids: &[i32]) -> Result<Vec<World>> {
        match self {
            Store::Sqlite(s) => s.worlds(ids),
            Store::Postgres(s) => s.worlds(ids),
        }
    }

    /// Every World row.
    pub fn all_worlds(&self) -> Result<Vec<World>> {
        match self {
            Store::Sqlite(s) => s.all_worlds(),
            Store::Postgres(s) => s.all_worlds(),
        }
    }

    /// Writes the numbers of `rows` (distinct ids) in one batch.
    pub fn update(&self, rows: &[World]) -> Result<()> {
        match self {
            Store::Sqlite(s) => s.update(rows),
            Store::Postgres(s) => s.update(rows),
        }
    }

    /// Every Fortune row.
    pub fn fortunes(&self) -> Result<Vec<Fortune>> {
        match self {
            Store::Sqlite(s) => s.fortunes(),
            Store::Postgres(s) => s.fortunes(),
        }
    }
}
