//! JSON in and out: rows written straight from the database to any `Write`, in mORMot's two layouts,
//! and models read from JSON with every field name and type checked.
//!
//! - Expanded: `[{"id":1,"name":"Ada"},…]` (one object per row; a single model is one object).
//! - Compact: `{"fieldCount":2,"values":["id","name",1,"Ada",…],"rowCount":1}`, mORMot's
//!   non-expanded form: the column names once, then the values row after row.
//!
//! Integers and reals are JSON numbers, booleans `true`/`false`, text strings, BLOBs base64
//! strings, NULL `null`.

use std::io::{self, Write};

use rusqlite::types::{ToSqlOutput, ValueRef};
use serde_json::Value as JsonValue;

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::field::FieldType;
use crate::model::{field_index, Model};
use crate::query::Query;
use crate::row_values::RowValues;
use moria_crypto::encoding::base64_into;

/// Layout of a JSON result set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JsonFormat {
    /// An array of objects.
    #[default]
    Expanded,
    /// mORMot's `{"fieldCount":n,"values":[names…, values…],"rowCount":m}`.
    Compact,
}

fn write_str<W: Write + ?Sized>(w: &mut W, s: &str) -> io::Result<()> {
    serde_json::to_writer(w, s).map_err(io::Error::from)
}

/// Writes one column value as JSON according to its field type.
fn write_value<W: Write + ?Sized>(w: &mut W, ty: FieldType, v: ValueRef<'_>) -> io::Result<()> {
    match v {
        ValueRef::Null => w.write_all(b"null"),
        ValueRef::Integer(i) if ty == FieldType::Bool => {
            w.write_all(if i != 0 { b"true" } else { b"false" })
        }
        ValueRef::Integer(i) => w.write_all(itoa::Buffer::new().format(i).as_bytes()),
        ValueRef::Real(f) => serde_json::to_writer(w, &f).map_err(io::Error::from),
        ValueRef::Text(t) => write_str(w, &String::from_utf8_lossy(t)),
        ValueRef::Blob(b) => {
            let mut out = Vec::with_capacity(b.len() / 3 * 4 + 6);
            out.push(b'"');
            base64_into(b, &mut out);
            out.push(b'"');
            w.write_all(&out)
        }
    }
}

fn write_output<W: Write + ?Sized>(
    w: &mut W,
    ty: FieldType,
    v: &ToSqlOutput<'_>,
) -> io::Result<()> {
    match v {
        ToSqlOutput::Borrowed(v) => write_value(w, ty, *v),
        ToSqlOutput::Owned(v) => write_value(w, ty, v.into()),
        _ => w.write_all(b"null"),
    }
}

/// Type of row column `c` (0 = id).
fn column_type<T: Model>(c: usize) -> FieldType {
    match c {
        0 => FieldType::Integer,
        c => T::FIELDS[c - 1].ty,
    }
}

/// Name of row column `c` (0 = id).
fn column_name<T: Model>(c: usize) -> &'static str {
    match c {
        0 => "id",
        c => T::FIELDS[c - 1].name,
    }
}

/// Writes the columns `cols` of a row as one JSON object.
fn write_row_object<T: Model, W: Write + ?Sized, R: RowValues + ?Sized>(
    w: &mut W,
    row: &R,
    cols: impl Iterator<Item = usize>,
) -> Result<()> {
    w.write_all(b"{")?;
    for (k, c) in cols.enumerate() {
        if k > 0 {
            w.write_all(b",")?;
        }
        write_str(w, column_name::<T>(c))?;
        w.write_all(b":")?;
        write_value(w, column_type::<T>(c), row.value(c)?)?;
    }
    w.write_all(b"}")?;
    Ok(())
}

/// Writes `m` as one JSON object `{"id":…,"field":…}`.
pub fn write_model<T: Model, W: Write + ?Sized>(m: &T, w: &mut W) -> io::Result<()> {
    w.write_all(b"{\"id\":")?;
    w.write_all(itoa::Buffer::new().format(m.id()).as_bytes())?;
    for (i, f) in T::FIELDS.iter().enumerate() {
        w.write_all(b",")?;
        write_str(w, f.name)?;
        w.write_all(b":")?;
        match m.field_value(i) {
            Some(v) => write_output(w, f.ty, &v)?,
            None => w.write_all(b"null")?,
        }
    }
    w.write_all(b"}")
}

/// `m` as a JSON object string.
pub fn to_json<T: Model>(m: &T) -> String {
    let mut out = Vec::with_capacity(64 + 16 * T::FIELDS.len());
    // Writing to a Vec cannot fail.
    let _ = write_model(m, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Sets `m`'s fields from a parsed JSON object; returns the names of the fields set (`id`
/// excluded). Unknown names and wrong types are errors naming the field.
pub fn merge_json_value<T: Model>(m: &mut T, v: &JsonValue) -> Result<Vec<&'static str>> {
    let obj = v
        .as_object()
        .ok_or_else(|| Error::JsonShape(format!("{}: expected a JSON object", T::TABLE)))?;
    let mut set = Vec::with_capacity(obj.len());
    for (key, value) in obj {
        if key == "id" {
            let id = value.as_i64().ok_or_else(|| Error::WrongType {
                table: T::TABLE,
                field: "id".into(),
                expected: "an integer",
            })?;
            m.set_id(id);
            continue;
        }
        let i = field_index::<T>(key)?;
        if !m.set_field_json(i, value) {
            return Err(Error::WrongType {
                table: T::TABLE,
                field: key.clone(),
                expected: T::FIELDS[i].expected(),
            });
        }
        set.push(T::FIELDS[i].name);
    }
    Ok(set)
}

/// Sets `m`'s fields from JSON text; see [`merge_json_value`].
pub fn merge_json<T: Model>(m: &mut T, json: &[u8]) -> Result<Vec<&'static str>> {
    let v: JsonValue = serde_json::from_slice(json)?;
    merge_json_value(m, &v)
}

/// A model from a JSON object; absent fields keep their default.
pub fn from_json<T: Model>(json: &[u8]) -> Result<T> {
    let mut m = T::default();
    merge_json(&mut m, json)?;
    Ok(m)
}

impl Conn {
    /// Writes the rows matching `q` (only `q.select` columns, if set) to `w`; returns the row count.
    /// Each row is written as it is read: on PostgreSQL while the statement's answer is being
    /// received, so give a memory buffer, not a socket (a shared connection's other fibers
    /// wait for this answer to be read).
    pub fn write_json<T: Model, W: Write + ?Sized>(
        &self,
        q: &Query,
        format: JsonFormat,
        w: &mut W,
    ) -> Result<usize> {
        let cols = q.columns::<T>()?;
        let mut n = 0usize;
        match format {
            JsonFormat::Expanded => w.write_all(b"[")?,
            JsonFormat::Compact => {
                w.write_all(b"{\"fieldCount\":")?;
                w.write_all(itoa::Buffer::new().format(cols.len()).as_bytes())?;
                w.write_all(b",\"values\":[")?;
                for (k, &c) in cols.iter().enumerate() {
                    if k > 0 {
                        w.write_all(b",")?;
                    }
                    write_str(w, column_name::<T>(c))?;
                }
            }
        }
        self.for_each_row::<T>(q, &mut |row| {
            match format {
                JsonFormat::Expanded => {
                    if n > 0 {
                        w.write_all(b",")?;
                    }
                    write_row_object::<T, W, _>(w, row, cols.iter().copied())?;
                }
                JsonFormat::Compact => {
                    for &c in &cols {
                        w.write_all(b",")?;
                        write_value(w, column_type::<T>(c), row.value(c)?)?;
                    }
                }
            }
            n += 1;
            Ok(())
        })?;
        match format {
            JsonFormat::Expanded => w.write_all(b"]")?,
            JsonFormat::Compact => {
                w.write_all(b"],\"rowCount\":")?;
                w.write_all(itoa::Buffer::new().format(n).as_bytes())?;
                w.write_all(b"}")?;
            }
        }
        Ok(n)
    }

    /// Writes the row with this id as one JSON object; `NotFound` when absent.
    pub fn write_json_by_id<T: Model, W: Write + ?Sized>(&self, id: i64, w: &mut W) -> Result<()> {
        self.on_engine_with(
            w,
            |db, w| {
                let mut stmt = db.prepare_cached(&T::sql().select_by_id)?;
                stmt.raw_bind_parameter(1, id)?;
                let mut rows = stmt.raw_query();
                let row = rows.next()?.ok_or(Error::NotFound {
                    table: T::TABLE,
                    id,
                })?;
                write_row_object::<T, W, _>(w, row, 0..=T::FIELDS.len())
            },
            |_, w| {
                self.pg_by_id::<T>(id, &mut |row| {
                    write_row_object::<T, W, _>(w, &row, 0..=T::FIELDS.len())
                })
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_by_type() {
        let cases: [(FieldType, ValueRef<'_>, &str); 7] = [
            (FieldType::Integer, ValueRef::Integer(-5), "-5"),
            (FieldType::Bool, ValueRef::Integer(1), "true"),
            (FieldType::Bool, ValueRef::Integer(0), "false"),
            (FieldType::Real, ValueRef::Real(0.25), "0.25"),
            (
                FieldType::Text,
                ValueRef::Text("a\"\n é".as_bytes()),
                "\"a\\\"\\n é\"",
            ),
            (FieldType::Blob, ValueRef::Blob(b"foo"), "\"Zm9v\""),
            (FieldType::Text, ValueRef::Null, "null"),
        ];
        for (ty, v, want) in cases {
            let mut out = Vec::new();
            write_value(&mut out, ty, v).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }
}
