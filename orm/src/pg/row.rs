//! What describes a result: [`Column`], [`Statement`] and [`RowIndex`] (rows themselves are
//! in `rows`); [`SimpleRow`], a row of the text protocol.

use std::sync::Arc;

use postgres_types::Type;

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
