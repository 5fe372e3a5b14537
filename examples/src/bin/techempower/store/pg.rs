//! PostgreSQL through `moria_orm::pg`: TFB's schema (`World(id, randomNumber)`, `Fortune(id,
//! message)`, unquoted as in TFB's own scripts), the N reads of `/queries` and `/updates`
//! queued at once, the writes of `/updates` in one statement. Every statement goes through the
//! pool's shared connections, where the statements of many requests are pipelined together,
//! as tokio-postgres does for TFB's Rust entries.

use moria_orm::pg::types::ToSql;
use moria_orm::pg::{Pool, PoolOptions, Row};

use super::Result;
use crate::fortune::{Fortune, STANDARD};
use crate::world::{World, WORLD_ROWS};

const SELECT_WORLD: &str = "SELECT id, randomNumber FROM World WHERE id = $1";
const SELECT_ALL: &str = "SELECT id, randomNumber FROM World";
const SELECT_FORTUNES: &str = "SELECT id, message FROM Fortune";
/// One statement for any number of rows: the ids and numbers travel as two arrays.
const UPDATE_WORLDS: &str = "UPDATE World SET randomNumber = u.n \
     FROM (SELECT unnest($1::int[]) AS id, unnest($2::int[]) AS n) AS u WHERE World.id = u.id";
const SCHEMA: &str = "DROP TABLE IF EXISTS World; DROP TABLE IF EXISTS Fortune; \
     CREATE TABLE World (id integer NOT NULL, randomNumber integer NOT NULL default 0, \
       PRIMARY KEY (id)); \
     CREATE TABLE Fortune (id integer NOT NULL, message varchar(2048) NOT NULL, \
       PRIMARY KEY (id));";
const FILL_WORLD: &str = "INSERT INTO World (id, randomNumber) \
     SELECT x.id, 1 + floor(random() * $1::int)::int FROM generate_series(1, $1::int) AS x(id)";
const INSERT_FORTUNE: &str = "INSERT INTO Fortune (id, message) VALUES ($1, $2)";

fn world(row: &Row) -> Result<World> {
    Ok(World {
        id: row.get(0)?,
        random_number: row.get(1)?,
    })
}

/// A PostgreSQL database behind a pool.
pub struct PgStore {
    pool: Pool,
}

impl PgStore {
    /// A pool configured by `options` to `url`, checked with one connection.
    pub fn open(url: &str, options: PoolOptions) -> Result<PgStore> {
        let config = moria_orm::pg::Config::parse(url)?;
        let pool = Pool::new(config, options)?;
        drop(pool.acquire()?);
        Ok(PgStore { pool })
    }

    /// See [`super::Store::init`].
    pub fn init(&self) -> Result<()> {
        let mut c = self.pool.acquire()?;
        let mut tx = c.transaction()?;
        tx.batch_execute(SCHEMA)?;
        tx.execute(FILL_WORLD, &[&WORLD_ROWS])?;
        for (i, message) in STANDARD.iter().enumerate() {
            tx.execute(INSERT_FORTUNE, &[&(i as i32 + 1), message])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Runs one statement on a shared (pipelined) connection, or on a pooled one when the
    /// pool has none.
    fn single(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        Ok(match self.pool.shared() {
            Some(shared) => shared?.query(sql, params)?,
            None => self.pool.acquire()?.query(sql, params)?,
        })
    }

    /// See [`super::Store::world`].
    pub fn world(&self, id: i32) -> Result<World> {
        let rows = self.single(SELECT_WORLD, &[&id])?;
        world(rows.first().ok_or("World row not found")?)
    }

    /// See [`super::Store::worlds`]: one SELECT per id, all queued at once on a shared
    /// connection (pipelined with other requests' statements), else on a pooled one.
    pub fn worlds(&self, ids: &[i32]) -> Result<Vec<World>> {
        let params: Vec<[&(dyn ToSql + Sync); 1]> = ids.iter().map(|id| [id as _]).collect();
        let results = match self.pool.shared() {
            Some(shared) => {
                let sets: Vec<&[&(dyn ToSql + Sync)]> = params.iter().map(|p| &p[..]).collect();
                shared?.query_many(SELECT_WORLD, &sets)?
            }
            None => {
                let mut c = self.pool.acquire()?;
                let mut p = c.pipeline();
                for one in &params {
                    p.query(SELECT_WORLD, one);
                }
                p.run()?
            }
        };
        let mut out = Vec::with_capacity(ids.len());
        for rows in results {
            let rows = rows?;
            let row = rows.first().ok_or("World row not found")?;
            out.push(world(row)?);
        }
        Ok(out)
    }

    /// See [`super::Store::all_worlds`].
    pub fn all_worlds(&self) -> Result<Vec<World>> {
        self.single(SELECT_ALL, &[])?.iter().map(world).collect()
    }

    /// See [`super::Store::update`].
    pub fn update(&self, rows: &[World]) -> Result<()> {
        let ids: Vec<i32> = rows.iter().map(|w| w.id).collect();
        let numbers: Vec<i32> = rows.iter().map(|w| w.random_number).collect();
        self.single(UPDATE_WORLDS, &[&ids, &numbers])?;
        Ok(())
    }

    /// See [`super::Store::fortunes`].
    pub fn fortunes(&self) -> Result<Vec<Fortune>> {
        self.single(SELECT_FORTUNES, &[])?
            .iter()
            .map(|r| {
                Ok(Fortune {
                    id: r.get(0)?,
                    message: r.get(1)?,
                })
            })
            .collect()
    }
}
