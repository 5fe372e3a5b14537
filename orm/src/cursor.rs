//! Streaming reads: a prepared, bound [`Select`] and the [`Cursor`] that walks its rows one at a
//! time, and [`Conn::for_each_row`], which hands each row on as it is read. On SQLite the rows
//! are stepped one by one, never all in memory. On PostgreSQL `for_each_row` reads each row in
//! place as it arrives; a `Select` receives its result into one buffer when it runs (one
//! allocation for all rows, not one per row) and the cursor walks that.

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
    Pg(Option<pg::RowSet>),
}

/// A query prepared and bound, ready to be walked with [`Select::rows`].
pub struct Select<'c, T> {
    inner: SelectInner<'c>,
    _model: PhantomData<fn() -> T>,
}

enum CursorInner<'s> {
    Sqlite(Rows<'s>),
    Pg(Option<&'s pg::RowSet>, usize),
}

/// Walks the rows of a [`Select`]; an `Iterator` of models, or [`Cursor::fill`] to reuse one.
pub struct Cursor<'s, T> {
    inner: CursorInner<'s>,
    _model: PhantomData<fn() -> T>,
}

/// A row of either engine.
pub(crate) enum AnyRow<'a, 's> {
    Sqlite(&'a rusqlite::Row<'s>),
    Pg(pg::RowRef<'a>),
}

impl RowValues for AnyRow<'_, '_> {
    fn value(&self, i: usize) -> Result<ValueRef<'_>> {
        match self {
            AnyRow::Sqlite(r) => r.value(i),
            AnyRow::Pg(r) => r.value(i),
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
                let mut rows = None;
                self.pg_select(&sql, q, &extra, &mut |r| {
                    pg::RowSet::push_to(&mut rows, r);
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

    /// Runs `q` and hands each row (id in column 0, then the fields) to `each` as it is read:
    /// stepped on SQLite, read in place as it arrives on PostgreSQL. Keep `each` free of I/O
    /// on PostgreSQL: on a shared connection the fibers queued behind this statement wait for
    /// it.
    pub(crate) fn for_each_row<T: Model>(
        &self,
        q: &Query,
        each: &mut dyn FnMut(&dyn RowValues) -> Result<()>,
    ) -> Result<()> {
        if !self.is_pg() {
            let mut sel = self.select::<T>(q)?;
            let mut rows = sel.rows();
            while let Some(row) = rows.next_row()? {
                each(&row)?;
            }
            return Ok(());
        }
        let (sql, extra) = q.select_sql::<T>(true)?;
        self.pg_select(&sql, q, &extra, &mut |r| each(&r))
    }

    /// Runs the select `sql` of `q` on PostgreSQL, each row to `each`.
    fn pg_select(
        &self,
        sql: &str,
        q: &Query,
        extra: &[rusqlite::types::Value],
        each: &mut dyn FnMut(pg::RowRef<'_>) -> Result<()>,
    ) -> Result<()> {
        let vals: Vec<_> = value_refs(q.param_values())
            .chain(value_refs(extra))
            .collect();
        self.pg_run(sql, &vals, each).map(|_| ())
    }
}

impl<T: Model> Select<'_, T> {
    /// Starts (or restarts) walking the rows.
    pub fn rows(&mut self) -> Cursor<'_, T> {
        Cursor {
            inner: match &mut self.inner {
                SelectInner::Sqlite(stmt) => CursorInner::Sqlite(stmt.raw_query()),
                SelectInner::Pg(rows) => CursorInner::Pg(rows.as_ref(), 0),
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
    pub(crate) fn next_row(&mut self) -> Result<Option<AnyRow<'_, 's>>> {
        Ok(match &mut self.inner {
            CursorInner::Sqlite(rows) => rows.next()?.map(AnyRow::Sqlite),
            CursorInner::Pg(set, next) => {
                let row = set.and_then(|s| s.get(*next));
                *next += 1;
                row.map(AnyRow::Pg)
            }
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
