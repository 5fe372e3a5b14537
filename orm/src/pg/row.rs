//! [`Row`]: one result row in binary format, read by column index or name into any
//! `postgres_types::FromSql` type; [`Column`] and [`Statement`] describe them.

use std::ops::Range;
use std::sync::Arc;

use fallible_iterator::FallibleIterator;
use postgres_protocol::message::backend::DataRowBody;
use postgres_types::{FromSql, Type};

use super::error::{Error, Result};

/// A result column: name and type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    name: String,
    type_: Type,
}

impl Column {
    pub(crate) fn new(name: String, type_: Type) -> Self {
        Column { name, type_ }
    }

    /// The column name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The column type.
    pub fn type_(&self) -> &Type {
        &self.type_
    }
}

/// A statement prepared on one connection: its parameter types and result columns.
#[derive(Clone, Debug)]
pub struct Statement {
    pub(crate) name: Arc<str>,
    pub(crate) params: Arc<[Type]>,
    pub(crate) columns: Arc<[Column]>,
}

impl Statement {
    /// Parameter types the server inferred (or was told).
    pub fn params(&self) -> &[Type] {
        &self.params
    }

    /// Result columns (empty for statements that return no rows).
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }
}

/// A column position or name.
pub trait RowIndex {
    /// The position of this column in `columns`, if any.
    fn index(&self, columns: &[Column]) -> Option<usize>;
    /// The index as text, for errors.
    fn describe(&self) -> String;
}

impl RowIndex for usize {
    fn index(&self, columns: &[Column]) -> Option<usize> {
        (*self < columns.len()).then_some(*self)
    }
    fn describe(&self) -> String {
        format!("#{self}")
    }
}

impl RowIndex for &str {
    fn index(&self, columns: &[Column]) -> Option<usize> {
        columns.iter().position(|c| c.name == *self).or_else(|| {
            columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(self))
        })
    }
    fn describe(&self) -> String {
        format!("{self:?}")
    }
}

/// One row of a result.
pub struct Row {
    columns: Arc<[Column]>,
    body: DataRowBody,
    ranges: Vec<Option<Range<usize>>>,
}

impl std::fmt::Debug for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Row")
            .field("columns", &self.columns)
            .finish_non_exhaustive()
    }
}

impl Row {
    pub(crate) fn new(columns: Arc<[Column]>, body: DataRowBody) -> Result<Row> {
        let ranges: Vec<_> = body.ranges().collect()?;
        if ranges.len() != columns.len() {
            return Err(Error::protocol(format!(
                "row has {} values for {} columns",
                ranges.len(),
                columns.len()
            )));
        }
        Ok(Row {
            columns,
            body,
            ranges,
        })
    }

    /// The columns.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether the row has no columns.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// The raw binary value of column `i` (`None` for NULL).
    pub fn raw(&self, i: usize) -> Option<&[u8]> {
        self.ranges
            .get(i)
            .cloned()
            .flatten()
            .map(|r| &self.body.buffer()[r])
    }

    /// Column `idx` (position or name) converted to `T`.
    ///
    /// ```no_run
    /// # fn f(row: &moria_orm::pg::Row) -> moria_orm::pg::Result<()> {
    /// let id: i64 = row.get("id")?;
    /// let name: Option<String> = row.get(1)?;
    /// # Ok(()) }
    /// ```
    pub fn get<'a, T: FromSql<'a>>(&'a self, idx: impl RowIndex) -> Result<T> {
        let i = idx
            .index(&self.columns)
            .ok_or_else(|| Error::Column(idx.describe()))?;
        let ty = &self.columns[i].type_;
        if !T::accepts(ty) {
            return Err(Error::Conversion(format!(
                "column {} of type {ty} cannot be read as {}",
                idx.describe(),
                std::any::type_name::<T>()
            )));
        }
        T::from_sql_nullable(ty, self.raw(i))
            .map_err(|e| Error::Conversion(format!("column {}: {e}", idx.describe())))
    }
}

/// A row of a simple (text-protocol) query: every value as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleRow {
    /// Column names.
    pub columns: Arc<[String]>,
    /// Values as text, `None` for NULL.
    pub values: Vec<Option<String>>,
}

impl SimpleRow {
    /// The value of the column named `name` (or at position `i` with `get_index`).
    pub fn get(&self, name: &str) -> Option<&str> {
        let i = self.columns.iter().position(|c| c == name)?;
        self.values[i].as_deref()
    }

    /// The value at position `i`.
    pub fn get_index(&self, i: usize) -> Option<&str> {
        self.values.get(i)?.as_deref()
    }
}
