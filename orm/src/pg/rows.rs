//! Rows without an allocation each: [`RowRef`] (one row borrowed where it lies, in the socket
//! buffer or in a [`RowSet`]), [`RowSet`] (a result's rows copied into one buffer) and the
//! DataRow scan both use.
//!
//! A DataRow body is a 16-bit value count, then per value a 32-bit length (-1 for NULL) and
//! the bytes; scanning it records where each value lies ([`Span`]), so reading a column is an
//! index, and a row of fixed-width columns (`bigint`, `double precision`, `boolean`) decodes
//! with no allocation at all.

use std::sync::Arc;

use postgres_types::FromSql;

use super::error::{Error, Result};
use super::row::{Column, RowIndex};

/// Where one value lies in its buffer: the first byte and the length (`None`: NULL).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    start: usize,
    len: Option<u32>,
}

/// Records the value spans of the DataRow `body` (the message without tag and length) into
/// `spans`, offset by `base`: one per column, each within the body, or an error.
pub(crate) fn scan(body: &[u8], columns: usize, base: usize, spans: &mut Vec<Span>) -> Result<()> {
    let bad = |what: &str| Error::protocol(format!("malformed DataRow: {what}"));
    let count = body
        .get(..2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]) as usize)
        .ok_or_else(|| bad("no value count"))?;
    if count != columns {
        return Err(Error::protocol(format!(
            "row has {count} values for {columns} columns"
        )));
    }
    let mut at = 2;
    for _ in 0..count {
        let len = body
            .get(at..at + 4)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| bad("value length past the end"))?;
        at += 4;
        let len = match u32::try_from(len) {
            Ok(n) if body.len() - at >= n as usize => Some(n),
            Ok(_) => return Err(bad("value past the end")),
            Err(_) if len == -1 => None,
            Err(_) => return Err(bad("negative value length")),
        };
        spans.push(Span {
            start: base + at,
            len,
        });
        at += len.map_or(0, |n| n as usize);
    }
    Ok(())
}

/// One row of a result, borrowed: read by column index or name into any
/// `postgres_types::FromSql` type, with no allocation for fixed-width values.
#[derive(Clone, Copy)]
pub struct RowRef<'a> {
    columns: &'a [Column],
    buf: &'a [u8],
    spans: &'a [Span],
}

impl std::fmt::Debug for RowRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowRef")
            .field("columns", &self.columns)
            .finish_non_exhaustive()
    }
}

impl<'a> RowRef<'a> {
    /// A row of `columns` whose values lie in `buf` at `spans` (one per column).
    pub(crate) fn new(columns: &'a [Column], buf: &'a [u8], spans: &'a [Span]) -> Self {
        RowRef {
            columns,
            buf,
            spans,
        }
    }

    /// The columns.
    pub fn columns(&self) -> &'a [Column] {
        self.columns
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether the row has no columns.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// The raw binary value of column `i` (`None` for NULL or past the last column).
    pub fn raw(&self, i: usize) -> Option<&'a [u8]> {
        let s = self.spans.get(i)?;
        Some(&self.buf[s.start..s.start + s.len? as usize])
    }

    /// Column `idx` (position or name) converted to `T`.
    pub fn get<T: FromSql<'a>>(&self, idx: impl RowIndex) -> Result<T> {
        let i = idx
            .index(self.columns)
            .ok_or_else(|| Error::Column(idx.describe()))?;
        let ty = self.columns[i].type_();
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

/// The rows of one result in one buffer: the DataRow bodies back to back and one flat list of
/// value spans, so collecting N rows costs no allocation per row.
#[derive(Debug)]
pub struct RowSet {
    columns: Arc<[Column]>,
    data: Vec<u8>,
    spans: Vec<Span>,
    rows: usize,
}

impl RowSet {
    /// An empty set of rows of `columns`.
    pub(crate) fn new(columns: Arc<[Column]>) -> Self {
        RowSet {
            columns,
            data: Vec::new(),
            spans: Vec::new(),
            rows: 0,
        }
    }

    /// Appends a copy of `row` to `set`, started with `row`'s columns when it is `None`.
    pub(crate) fn push_to(set: &mut Option<RowSet>, row: RowRef<'_>) {
        set.get_or_insert_with(|| RowSet::new(row.columns.into()))
            .push(row);
    }

    /// Appends a copy of `row` (a row of the same columns).
    pub(crate) fn push(&mut self, row: RowRef<'_>) {
        let base = self.data.len();
        let first = row.spans.first().map_or(0, |s| s.start);
        let end = row
            .spans
            .last()
            .map_or(first, |s| s.start + s.len.map_or(0, |n| n as usize));
        self.data.extend_from_slice(&row.buf[first..end]);
        self.spans.extend(row.spans.iter().map(|s| Span {
            start: s.start - first + base,
            len: s.len,
        }));
        self.rows += 1;
    }

    /// The columns.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Row `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<RowRef<'_>> {
        let n = self.columns.len();
        (i < self.rows).then(|| RowRef::new(&self.columns, &self.data, &self.spans[i * n..][..n]))
    }

    /// The rows in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = RowRef<'_>> + '_ {
        let n = self.columns.len();
        (0..self.rows)
            .map(move |i| RowRef::new(&self.columns, &self.data, &self.spans[i * n..][..n]))
    }

    /// The rows as owned [`Row`]s that share this buffer (no copy).
    pub fn into_rows(self) -> Vec<Row> {
        let set = Arc::new(self);
        (0..set.rows)
            .map(|index| Row {
                set: set.clone(),
                index,
            })
            .collect()
    }
}

/// One row of a result, owned: it shares its result's buffer with the other rows of that
/// result (which stays in memory while any of them does).
pub struct Row {
    set: Arc<RowSet>,
    index: usize,
}

impl std::fmt::Debug for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Row")
            .field("columns", &self.set.columns)
            .finish_non_exhaustive()
    }
}

impl Row {
    /// The row, borrowed.
    pub fn as_row_ref(&self) -> RowRef<'_> {
        let n = self.set.columns.len();
        RowRef::new(
            &self.set.columns,
            &self.set.data,
            &self.set.spans[self.index * n..][..n],
        )
    }

    /// The columns.
    pub fn columns(&self) -> &[Column] {
        &self.set.columns
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.set.columns.len()
    }

    /// Whether the row has no columns.
    pub fn is_empty(&self) -> bool {
        self.set.columns.is_empty()
    }

    /// The raw binary value of column `i` (`None` for NULL).
    pub fn raw(&self, i: usize) -> Option<&[u8]> {
        self.as_row_ref().raw(i)
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
        self.as_row_ref().get(idx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use postgres_types::Type;

    fn columns() -> Arc<[Column]> {
        vec![
            Column::new("id".into(), Type::INT8),
            Column::new("name".into(), Type::TEXT),
        ]
        .into()
    }

    /// A DataRow body: the count, then each value (`None`: NULL).
    fn body(values: &[Option<&[u8]>]) -> Vec<u8> {
        let mut b = (values.len() as u16).to_be_bytes().to_vec();
        for v in values {
            match v {
                Some(v) => {
                    b.extend_from_slice(&(v.len() as i32).to_be_bytes());
                    b.extend_from_slice(v);
                }
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
        b
    }

    #[test]
    fn rows_collected_in_one_buffer_read_back_by_index_and_name() {
        let cols = columns();
        let mut set = RowSet::new(cols.clone());
        let mut spans = Vec::new();
        for (id, name) in [(1i64, Some(&b"one"[..])), (2, None)] {
            let b = body(&[Some(&id.to_be_bytes()), name]);
            spans.clear();
            scan(&b, 2, 0, &mut spans).unwrap();
            set.push(RowRef::new(&cols, &b, &spans));
        }
        assert_eq!(set.len(), 2);
        let got: Vec<(i64, Option<String>)> = set
            .iter()
            .map(|r| (r.get("id").unwrap(), r.get(1).unwrap()))
            .collect();
        assert_eq!(got, [(1, Some("one".into())), (2, None)]);
        let rows = set.into_rows();
        assert_eq!(rows[1].get::<i64>(0).unwrap(), 2);
        assert!(rows[1].raw(1).is_none());
        assert!(rows[0].get::<i32>("id").is_err());
    }

    #[test]
    fn malformed_rows_are_refused() {
        let mut spans = Vec::new();
        let one = body(&[Some(b"x")]);
        assert!(scan(&one, 2, 0, &mut spans).is_err());
        let mut past = body(&[Some(b"abc"), None]);
        past.truncate(past.len() - 6);
        assert!(scan(&past, 2, 0, &mut spans).is_err());
        let negative = [0, 1, 0xff, 0xff, 0xff, 0xfe];
        assert!(scan(&negative, 1, 0, &mut spans).is_err());
        assert!(scan(&[0], 0, 0, &mut spans).is_err());
    }
}
