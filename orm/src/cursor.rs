//! Streaming reads: a prepared, bound [`Select`] and the [`Cursor`] that walks its rows one at a
//! time. On SQLite the rows are stepped one by one, never all in memory; on PostgreSQL the
//! result is received when the select runs and the cursor walks it.

use std::marker::PhantomData;

use rusqlite::types::ValueRef;
use rusqlite::{CachedStatement, Rows};

use crate::conn::Conn;
use crate::crud::bind_values;
use crate::error::Result;
use crate::exec::value_refs;
use crate::model::{fill_from_row, from_row, Model};
use crate::pg;
use crate::query::Query;
use crate::row_values::RowValues;

enum SelectInner<'c> {
    Sqlite(CachedStatement<'c>),
    Pg(Vec<pg::Row>),
}

/// A query prepared and bound, ready to be walked with [`Select::rows`].
pub struct Select<'c, T> {
    inner: SelectInner<'c>,
    _model: PhantomData<fn() -> T>,
}

enum CursorInner<'s> {
    Sqlite(Rows<'s>),
    Pg(std::slice::Iter<'s, pg::Row>),
}

/// Walks the rows of a [`Select`]; an `Iterator` of models, or [`Cursor::fill`] to reuse one.
pub struct Cursor<'s, T> {
    inner: CursorInner<'s>,
    _model: PhantomData<fn() -> T>,
}

/// A row of either engine.
pub(crate) enum RowRef<'a, 's> {
    Sqlite(&'a rusqlite::Row<'s>),
    Pg(&'a pg::Row),
}

impl RowValues for RowRef<'_, '_> {
    fn value(&self, i: usize) -> Result<ValueRef<'_>> {
        match self {
            RowRef::Sqlite(r) => r.value(i),
            RowRef::Pg(r) => r.value(i),
        }
    }
}

impl Conn {
    /// Prepares `q` for streaming.
    pub fn select<T: Model>(&self, q: &Query) -> Result<Select<'_, T>> {
        let (sql, extra) = q.select_sql::<T>(self.is_pg())?;
        let inner = self.on_engine(
            |db| -> Result<SelectInner<'_>> {
                let mut stmt = db.prepare_cached(&sql)?;
                let next = bind_values(&mut stmt, 1, q.params())?;
                bind_values(&mut stmt, next, &extra)?;
                Ok(SelectInner::Sqlite(stmt))
            },
            |_| {
                let vals: Vec<_> = value_refs(q.param_values())
                    .chain(value_refs(&extra))
                    .collect();
                let mut rows = Vec::new();
                self.pg_run(&sql, &vals, &mut |r| {
                    rows.push(r);
                    Ok(())
                })?;
                Ok(SelectInner::Pg(rows))
            },
        )?;
        Ok(Select {
            inner,
            _model: PhantomData,
        })
    }
}

impl<T: Model> Select<'_, T> {
    /// Starts (or restarts) walking the rows.
    pub fn rows(&mut self) -> Cursor<'_, T> {
        Cursor {
            inner: match &mut self.inner {
                SelectInner::Sqlite(stmt) => CursorInner::Sqlite(stmt.raw_query()),
                SelectInner::Pg(rows) => CursorInner::Pg(rows.iter()),
            },
            _model: PhantomData,
        }
    }
}

impl<'s, T: Model> Cursor<'s, T> {
    /// Reads the next row into `m`, reusing its buffers; false at the end.
    pub fn fill(&mut self, m: &mut T) -> Result<bool> {
        match self.next_row()? {
            Some(row) => {
                fill_from_row(m, &row)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The next raw row (id in column 0, then the fields).
    pub(crate) fn next_row(&mut self) -> Result<Option<RowRef<'_, 's>>> {
        Ok(match &mut self.inner {
            CursorInner::Sqlite(rows) => rows.next()?.map(RowRef::Sqlite),
            CursorInner::Pg(it) => it.next().map(RowRef::Pg),
        })
    }
}

impl<T: Model> Iterator for Cursor<'_, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_row() {
            Ok(Some(row)) => Some(from_row(&row)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}
