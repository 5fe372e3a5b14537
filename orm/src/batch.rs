//! [`Batch`]: adds, updates and deletes collected in memory and sent in one transaction.
//!
//! Runs of adds become multi-row `INSERT … VALUES (…),(…)` statements of at most
//! `batch_params` bound values each (SQLite's own limit caps it). As in mORMot, the ORM reads
//! `max(id)` once inside the transaction and assigns ids itself, so every new id is known
//! without a query per row. Any failure rolls the whole batch back.

use crate::conn::Conn;
use crate::error::{Error, Result};
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

    /// Highest id forced by a queued add, 0 if none.
    fn max_forced_id(&self) -> i64 {
        self.ops
            .iter()
            .filter_map(|op| match op {
                BatchOp::Add(m) => Some(m.id()),
                _ => None,
            })
            .max()
            .unwrap_or(0)
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
        let max_in_table: Option<i64> = self.db.query_row(&T::sql().max_id, [], |r| r.get(0))?;
        let mut next_id = max_in_table
            .unwrap_or(0)
            .max(batch.max_forced_id())
            .checked_add(1)
            .ok_or_else(|| Error::Config(format!("{}: id space exhausted", T::TABLE)))?;
        let per_stmt = (self.batch_params / (T::FIELDS.len() + 1)).max(1);
        let mut ids = Vec::with_capacity(batch.ops.len());
        let mut i = 0;
        while i < batch.ops.len() {
            match &mut batch.ops[i] {
                BatchOp::Add(_) => {
                    let run = batch.ops[i..]
                        .iter()
                        .take_while(|op| matches!(op, BatchOp::Add(_)))
                        .count();
                    for chunk in batch.ops[i..i + run].chunks_mut(per_stmt) {
                        self.insert_chunk(chunk, now, &mut next_id, &mut ids)?;
                    }
                    i += run;
                    continue;
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

    fn insert_chunk<T: Model>(
        &self,
        chunk: &mut [BatchOp<T>],
        now: i64,
        next_id: &mut i64,
        ids: &mut Vec<i64>,
    ) -> Result<()> {
        let mut stmt = self
            .db
            .prepare_cached(&multi_insert(T::TABLE, T::FIELDS, chunk.len()))?;
        let mut param = 1;
        for op in chunk {
            if let BatchOp::Add(m) = op {
                m.touch(now, true);
                if m.id() == 0 {
                    m.set_id(*next_id);
                    *next_id += 1;
                }
                stmt.raw_bind_parameter(param, m.id())?;
                param = m.bind_fields(&mut stmt, param + 1)?;
                ids.push(m.id());
            }
        }
        stmt.raw_execute().map_err(|e| Error::write(T::TABLE, e))?;
        Ok(())
    }
}
