//! Streaming reads: a prepared, bound [`Select`] and the [`Cursor`] that walks its rows one at a
//! time, without loading them all.

use std::marker::PhantomData;

use rusqlite::{CachedStatement, Row, Rows};

use crate::conn::Conn;
use crate::crud::bind_values;
use crate::error::Result;
use crate::model::{fill_from_row, from_row, Model};
use crate::query::Query;

/// A query prepared and bound, ready to be walked with [`Select::rows`].
pub struct Select<'c, T> {
    stmt: CachedStatement<'c>,
    _model: PhantomData<fn() -> T>,
}

/// Walks the rows of a [`Select`]; an `Iterator` of models, or [`Cursor::fill`] to reuse one.
pub struct Cursor<'s, T> {
    rows: Rows<'s>,
    _model: PhantomData<fn() -> T>,
}

impl Conn {
    /// Prepares `q` for streaming.
    pub fn select<T: Model>(&self, q: &Query) -> Result<Select<'_, T>> {
        let (sql, extra) = q.select_sql::<T>()?;
        let mut stmt = self.db.prepare_cached(&sql)?;
        let next = bind_values(&mut stmt, 1, q.params())?;
        bind_values(&mut stmt, next, &extra)?;
        Ok(Select {
            stmt,
            _model: PhantomData,
        })
    }
}

impl<T: Model> Select<'_, T> {
    /// Starts (or restarts) walking the rows.
    pub fn rows(&mut self) -> Cursor<'_, T> {
        Cursor {
            rows: self.stmt.raw_query(),
            _model: PhantomData,
        }
    }
}

impl<'s, T: Model> Cursor<'s, T> {
    /// Reads the next row into `m`, reusing its buffers; false at the end.
    pub fn fill(&mut self, m: &mut T) -> Result<bool> {
        match self.rows.next()? {
            Some(row) => {
                fill_from_row(m, row)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The next raw row (id in column 0, then the fields).
    pub(crate) fn next_row(&mut self) -> Result<Option<&Row<'s>>> {
        Ok(self.rows.next()?)
    }
}

impl<T: Model> Iterator for Cursor<'_, T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.rows.next() {
            Ok(Some(row)) => Some(from_row(row)),
            Ok(None) => None,
            Err(e) => Some(Err(e.into())),
        }
    }
}
