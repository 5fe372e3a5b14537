//! [`Batch`]: adds, updates and deletes collected in memory and sent in one transaction.
//!
//! Runs of adds become multi-row `INSERT … VALUES (…),(…)` statements of at most
//! `batch_params` bound values each (SQLite's own limit caps it). The ids are not bound: SQLite
//! numbers new rows max+1, max+2, … under the write lock, so reading `max(id)` once per run of
//! adds gives every new id without a query per row (checked against `last_insert_rowid` after
//! each statement). Letting SQLite append measured ~20% faster than binding explicit ids, as
//! mORMot does (`cargo run --release -p moria-bench --bin orm -- --shapes`, bench/README.md).
//! On PostgreSQL each statement ends in `RETURNING "id"` and the ids come back with it (the
//! identity sequence numbers them, so concurrent writers never collide).
//! Any failure rolls the whole batch back.

use rusqlite::types::ValueRef;

use crate::conn::Conn;
use crate::crud::{field_outputs, first_integer};
use crate::error::{Error, Result};
use crate::exec::output_ref;
use crate::field::now_millis;
use crate::model::Model;
use crate::sql::multi_insert;

#[derive(Clone, Debug)]
enum BatchOp<T> {
    Add(T),
    Update(T),
    Delete(i64),
}

/// Writes to one table, applied all-or-nothing by [`Conn::batch_send`].
#[derive(Clone, Debug)]
pub struct Batch<T> {
    ops: Vec<BatchOp<T>>,
}

impl<T> Default for Batch<T> {
    fn default() -> Self {
        Batch { ops: Vec::new() }
    }
}

impl<T: Model> Batch<T> {
    /// An empty batch.
    pub fn new() -> Self {
        Batch::default()
    }

    /// An empty batch with room for `n` operations.
    pub fn with_capacity(n: usize) -> Self {
        Batch {
            ops: Vec::with_capacity(n),
        }
    }

    /// Queues an insert (with `m.id` when non-zero, else a new id).
    pub fn add(&mut self, m: T) {
        self.ops.push(BatchOp::Add(m));
    }

    /// Queues a full update of row `m.id`.
    pub fn update(&mut self, m: T) {
        self.ops.push(BatchOp::Update(m));
    }

    /// Queues a delete.
    pub fn delete(&mut self, id: i64) {
        self.ops.push(BatchOp::Delete(id));
    }

    /// Number of queued operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

impl Conn {
    /// Applies `batch` in one transaction (a savepoint when nested); returns one id per
    /// operation, in order (the new id for adds). On error nothing is applied and adds that had
    /// no id get id 0 back, so the batch can be sent again.
    pub fn batch_send<T: Model>(&self, batch: &mut Batch<T>) -> Result<Vec<i64>> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let unnumbered: Vec<usize> = (0..batch.ops.len())
            .filter(|&i| matches!(&batch.ops[i], BatchOp::Add(m) if m.id() == 0))
            .collect();
        let out = self.transaction(|c| c.run_batch(batch));
        if out.is_err() {
            for i in unnumbered {
                if let BatchOp::Add(m) = &mut batch.ops[i] {
                    m.set_id(0);
                }
            }
        }
        out
    }

    fn run_batch<T: Model>(&self, batch: &mut Batch<T>) -> Result<Vec<i64>> {
        let now = now_millis();
        let per_stmt = match T::FIELDS.len() {
            0 => 1,
            n => (self.batch_params / n).max(1),
        };
        let mut ids = Vec::with_capacity(batch.ops.len());
        let mut i = 0;
        while i < batch.ops.len() {
            match &mut batch.ops[i] {
                BatchOp::Add(m) if m.id() == 0 => {
                    let run = batch.ops[i..]
                        .iter()
                        .take_while(|op| matches!(op, BatchOp::Add(m) if m.id() == 0))
                        .count();
                    if self.is_pg() {
                        for chunk in batch.ops[i..i + run].chunks_mut(per_stmt) {
                            self.pg_insert_chunk(chunk, now, &mut ids)?;
                        }
                    } else {
                        let mut last = self.max_id::<T>()?;
                        for chunk in batch.ops[i..i + run].chunks_mut(per_stmt) {
                            last = self.insert_chunk(chunk, now, last, &mut ids)?;
                        }
                    }
                    i += run;
                    continue;
                }
                BatchOp::Add(m) => {
                    ids.push(self.add(m)?);
                }
                BatchOp::Update(m) => {
                    self.update(m)?;
                    ids.push(m.id());
                }
                BatchOp::Delete(id) => {
                    self.delete::<T>(*id)?;
                    ids.push(*id);
                }
            }
            i += 1;
        }
        Ok(ids)
    }

    /// PostgreSQL: inserts `chunk` with one `INSERT … VALUES … RETURNING "id"`; the ids come
    /// back in the order of the VALUES rows.
    fn pg_insert_chunk<T: Model>(
        &self,
        chunk: &mut [BatchOp<T>],
        now: i64,
        ids: &mut Vec<i64>,
    ) -> Result<()> {
        let mut sql = multi_insert(T::TABLE, T::FIELDS, chunk.len());
        sql.push_str(" RETURNING \"id\"");
        let mut new_ids = Vec::with_capacity(chunk.len());
        {
            for op in chunk.iter_mut() {
                if let BatchOp::Add(m) = op {
                    m.touch(now, true);
                }
            }
            let outs: Vec<_> = chunk
                .iter()
                .filter_map(|op| match op {
                    BatchOp::Add(m) => Some(field_outputs(m)),
                    _ => None,
                })
                .collect();
            let vals: Vec<ValueRef<'_>> = outs.iter().flatten().map(output_ref).collect();
            self.pg_write(T::TABLE, &sql, &vals, &mut |row| {
                new_ids.push(first_integer(&row)?.unwrap_or(0));
                Ok(())
            })?;
        }
        if new_ids.len() != chunk.len() {
            return Err(Error::Config(format!(
                "{}: {} ids returned for {} rows",
                T::TABLE,
                new_ids.len(),
                chunk.len()
            )));
        }
        for (op, id) in chunk.iter_mut().zip(new_ids) {
            if let BatchOp::Add(m) = op {
                m.set_id(id);
                ids.push(id);
            }
        }
        Ok(())
    }

    /// The SQLite connection (batch paths that only SQLite takes).
    fn lite(&self) -> Result<&rusqlite::Connection> {
        self.sqlite()
            .ok_or_else(|| Error::Config("not a SQLite connection".into()))
    }

    /// Highest id in `T`'s table, 0 when empty.
    fn max_id<T: Model>(&self) -> Result<i64> {
        let mut stmt = self.lite()?.prepare_cached(&T::sql().max_id)?;
        let max: Option<i64> = stmt.query_row([], |r| r.get(0))?;
        Ok(max.unwrap_or(0))
    }

    /// Inserts `chunk` (adds without an id) with one statement; SQLite numbers the rows
    /// `last+1, last+2, …` (its rowid rule while the table's maximum is below `i64::MAX`, which
    /// the write lock keeps stable). Checks that rule held and returns the new last id.
    fn insert_chunk<T: Model>(
        &self,
        chunk: &mut [BatchOp<T>],
        now: i64,
        last: i64,
        ids: &mut Vec<i64>,
    ) -> Result<i64> {
        let n = i64::try_from(chunk.len()).unwrap_or(i64::MAX);
        let expected = last
            .checked_add(n)
            .ok_or_else(|| Error::Config(format!("{}: id space exhausted", T::TABLE)))?;
        let db = self.lite()?;
        let mut stmt = db.prepare_cached(&multi_insert(T::TABLE, T::FIELDS, chunk.len()))?;
        let mut param = 1;
        for op in chunk.iter_mut() {
            if let BatchOp::Add(m) = op {
                m.touch(now, true);
                param = m.bind_fields(&mut stmt, param)?;
            }
        }
        stmt.raw_execute().map_err(|e| Error::write(T::TABLE, e))?;
        let got = db.last_insert_rowid();
        if got != expected {
            return Err(Error::Config(format!(
                "{}: SQLite assigned ids up to {got}, expected {expected}",
                T::TABLE
            )));
        }
        for (k, op) in (1..).zip(chunk.iter_mut()) {
            if let BatchOp::Add(m) = op {
                m.set_id(last + k);
                ids.push(last + k);
            }
        }
        Ok(expected)
    }
}
