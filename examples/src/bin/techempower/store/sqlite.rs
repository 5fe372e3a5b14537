//! SQLite through moria-orm: the two TFB tables as models on a `Db`.

use moria_orm::{model, Batch, Db, Query};

use super::Result;
use crate::fortune::{Fortune, STANDARD};
use crate::world::{Rng, World, WORLD_ROWS};

model! {
    /// TFB's World table (its column keeps TFB's camel-case name).
    #[allow(non_snake_case)]
    pub struct WorldRow as "World" {
        /// 1..=10000.
        pub randomNumber: i64,
    }
}

model! {
    /// TFB's Fortune table.
    pub struct FortuneRow as "Fortune" {
        /// Any UTF-8 text.
        pub message: String,
    }
}

fn world(row: WorldRow) -> Result<World> {
    Ok(World {
        id: i32::try_from(row.id)?,
        random_number: i32::try_from(row.randomNumber)?,
    })
}

/// A SQLite database: a file, or `:memory:`.
pub struct SqliteStore {
    db: Db,
    memory: bool,
}

impl SqliteStore {
    /// Opens (or creates) the file; `:memory:` is an in-memory database.
    pub fn open(target: &str) -> Result<SqliteStore> {
        Ok(SqliteStore {
            db: Db::open(target)?,
            memory: target == ":memory:",
        })
    }

    /// Whether this is `:memory:`.
    pub fn is_memory(&self) -> bool {
        self.memory
    }

    /// See [`super::Store::init`].
    pub fn init(&self) -> Result<()> {
        self.db
            .run(|c| c.execute_batch("DROP TABLE IF EXISTS World; DROP TABLE IF EXISTS Fortune"))?;
        self.db.ensure_schema::<WorldRow>()?;
        self.db.ensure_schema::<FortuneRow>()?;
        let mut rng = Rng::new();
        let mut worlds = Batch::with_capacity(WORLD_ROWS as usize);
        // A fresh table numbers the rows 1, 2, … in order.
        for _ in 0..WORLD_ROWS {
            worlds.add(WorldRow {
                randomNumber: rng.world_number().into(),
                ..WorldRow::default()
            });
        }
        self.db.batch_send(worlds)?;
        let mut fortunes = Batch::with_capacity(STANDARD.len());
        for message in STANDARD {
            fortunes.add(FortuneRow {
                message: message.into(),
                ..FortuneRow::default()
            });
        }
        self.db.batch_send(fortunes)?;
        Ok(())
    }

    /// See [`super::Store::world`].
    pub fn world(&self, id: i32) -> Result<World> {
        world(self.db.get::<WorldRow>(id.into())?)
    }

    /// See [`super::Store::worlds`].
    pub fn worlds(&self, ids: &[i32]) -> Result<Vec<World>> {
        let ids = ids.to_vec();
        let rows = self.db.read(move |c| {
            ids.iter()
                .map(|&id| c.get::<WorldRow>(id.into()))
                .collect::<moria_orm::Result<Vec<_>>>()
        })?;
        rows.into_iter().map(world).collect()
    }

    /// See [`super::Store::all_worlds`].
    pub fn all_worlds(&self) -> Result<Vec<World>> {
        self.db
            .list::<WorldRow>(Query::new())?
            .into_iter()
            .map(world)
            .collect()
    }

    /// See [`super::Store::update`].
    pub fn update(&self, rows: &[World]) -> Result<()> {
        let mut batch = Batch::with_capacity(rows.len());
        for w in rows {
            batch.update(WorldRow {
                id: w.id.into(),
                randomNumber: w.random_number.into(),
            });
        }
        self.db.batch_send(batch)?;
        Ok(())
    }

    /// See [`super::Store::fortunes`].
    pub fn fortunes(&self) -> Result<Vec<Fortune>> {
        self.db
            .list::<FortuneRow>(Query::new())?
            .into_iter()
            .map(|f| {
                Ok(Fortune {
                    id: i32::try_from(f.id)?,
                    message: f.message,
                })
            })
            .collect()
    }
}
