//! Create, read, update, delete on a [`Conn`], each on a cached prepared statement.

use rusqlite::types::{ToSqlOutput, Value, ValueRef};
use rusqlite::Statement;

use crate::conn::Conn;
use crate::error::{Error, Result};
use crate::exec::{output_ref, value_refs};
use crate::field::{now_millis, Auto};
use crate::model::{field_index, fill_from_row, from_row, Model};
use crate::query::Query;
use crate::row_values::RowValues;
use crate::sql::push_ident;

/// Binds `values` to parameters `first..`; returns the next free index.
pub(crate) fn bind_values<'v>(
    stmt: &mut Statement<'_>,
    first: usize,
    values: impl IntoIterator<Item = &'v Value>,
) -> rusqlite::Result<usize> {
    let mut i = first;
    for v in values {
        stmt.raw_bind_parameter(i, v)?;
        i += 1;
    }
    Ok(i)
}

/// Every field value of `m`, in order.
pub(crate) fn field_outputs<T: Model>(m: &T) -> Vec<ToSqlOutput<'_>> {
    (0..T::FIELDS.len())
        .filter_map(|i| m.field_value(i))
        .collect()
}

/// The integer in column 0 of `row`, if it is one.
pub(crate) fn first_integer<R: RowValues + ?Sized>(row: &R) -> Result<Option<i64>> {
    Ok(match row.value(0)? {
        ValueRef::Integer(i) => Some(i),
        _ => None,
    })
}

impl Conn {
    /// Inserts `m` (with its own id when non-zero), fills its timestamps and id; returns the id.
    pub fn add<T: Model>(&self, m: &mut T) -> Result<i64> {
        m.touch(now_millis(), true);
        let sql = T::sql();
        let id = self.on_engine(
            |db| -> Result<i64> {
                if m.id() == 0 {
                    let mut stmt = db.prepare_cached(&sql.insert)?;
                    m.bind_fields(&mut stmt, 1)?;
                    stmt.raw_execute().map_err(|e| Error::write(T::TABLE, e))?;
                    Ok(db.last_insert_rowid())
                } else {
                    let mut stmt = db.prepare_cached(&sql.insert_with_id)?;
                    stmt.raw_bind_parameter(1, m.id())?;
                    m.bind_fields(&mut stmt, 2)?;
                    stmt.raw_execute().map_err(|e| Error::write(T::TABLE, e))?;
                    Ok(m.id())
                }
            },
            |_| self.pg_add(m),
        )?;
        m.set_id(id);
        Ok(id)
    }

    fn pg_add<T: Model>(&self, m: &T) -> Result<i64> {
        let sql = T::sql();
        let outs = field_outputs(m);
        if m.id() == 0 {
            let vals: Vec<ValueRef<'_>> = outs.iter().map(output_ref).collect();
            let mut id = 0;
            self.pg_write(T::TABLE, &sql.insert_returning, &vals, &mut |row| {
                id = first_integer(&row)?.unwrap_or(0);
                Ok(())
            })?;
            Ok(id)
        } else {
            let mut vals = vec![ValueRef::Integer(m.id())];
            vals.extend(outs.iter().map(output_ref));
            self.pg_write(T::TABLE, &sql.insert_with_id, &vals, &mut |_| Ok(()))?;
            self.pg_bump_sequence::<T>(m.id())?;
            Ok(m.id())
        }
    }

    /// Moves `T`'s id sequence past `id` (after a row was added with its own id), never back.
    pub(crate) fn pg_bump_sequence<T: Model>(&self, id: i64) -> Result<()> {
        let mut table = String::new();
        push_ident(&mut table, T::TABLE);
        self.pg_run(
            "SELECT setval(s::regclass, ?) FROM pg_get_serial_sequence(?, 'id') AS s \
             WHERE ? > COALESCE(pg_sequence_last_value(s::regclass), 0)",
            &[
                ValueRef::Integer(id),
                ValueRef::Text(table.as_bytes()),
                ValueRef::Integer(id),
            ],
            &mut |_| Ok(()),
        )?;
        Ok(())
    }

    /// The row with this id, or `NotFound`.
    pub fn get<T: Model>(&self, id: i64) -> Result<T> {
        let mut m = T::default();
        self.get_into(id, &mut m)?;
        Ok(m)
    }

    /// Reads the row with this id into `m`, reusing its buffers; `NotFound` when absent.
    pub fn get_into<T: Model>(&self, id: i64, m: &mut T) -> Result<()> {
        self.on_engine_with(
            m,
            |db, m| {
                let mut stmt = db.prepare_cached(&T::sql().select_by_id)?;
                stmt.raw_bind_parameter(1, id)?;
                let mut rows = stmt.raw_query();
                match rows.next()? {
                    Some(row) => fill_from_row(m, row),
                    None => Err(Error::NotFound {
                        table: T::TABLE,
                        id,
                    }),
                }
            },
            |_, m| self.pg_by_id::<T>(id, &mut |row| fill_from_row(m, &row)),
        )
    }

    /// The first row matching `q`, or `None`.
    pub fn find<T: Model>(&self, q: &Query) -> Result<Option<T>> {
        let mut sel = self.select::<T>(q)?;
        let first = sel.rows().next().transpose();
        first
    }

    /// All rows matching `q`, loaded into memory (see [`Conn::select`] to stream them); each
    /// row becomes a model as it is read.
    pub fn list<T: Model>(&self, q: &Query) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.for_each_row::<T>(q, &mut |row| {
            out.push(from_row(row)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// Writes every field of `m` to its row and refreshes `ModTime` fields; `NotFound` when
    /// the row is gone.
    pub fn update<T: Model>(&self, m: &mut T) -> Result<()> {
        m.touch(now_millis(), false);
        let changed = self.on_engine(
            |db| -> Result<usize> {
                let mut stmt = db.prepare_cached(&T::sql().update)?;
                let next = m.bind_fields(&mut stmt, 1)?;
                stmt.raw_bind_parameter(next, m.id())?;
                stmt.raw_execute().map_err(|e| Error::write(T::TABLE, e))
            },
            |_| {
                let outs = field_outputs(m);
                let mut vals: Vec<ValueRef<'_>> = outs.iter().map(output_ref).collect();
                vals.push(ValueRef::Integer(m.id()));
                let n = self.pg_write(T::TABLE, &T::sql().update, &vals, &mut |_| Ok(()))?;
                Ok(n as usize)
            },
        )?;
        self.found::<T>(changed, m.id())
    }

    /// Writes only the named fields of `m` (plus its `ModTime` fields); `NotFound` when the row
    /// is gone, `UnknownField` for a bad name.
    pub fn update_fields<T: Model>(&self, m: &mut T, fields: &[&str]) -> Result<()> {
        let mut chosen = fields
            .iter()
            .map(|f| field_index::<T>(f))
            .collect::<Result<Vec<_>>>()?;
        chosen.extend(
            T::FIELDS
                .iter()
                .enumerate()
                .filter(|(_, f)| f.auto == Auto::OnChange)
                .map(|(i, _)| i),
        );
        chosen.sort_unstable();
        chosen.dedup();
        if chosen.is_empty() {
            return if self.exists::<T>(m.id())? {
                Ok(())
            } else {
                self.found::<T>(0, m.id())
            };
        }
        m.touch(now_millis(), false);
        let mut sql = String::from("UPDATE ");
        push_ident(&mut sql, T::TABLE);
        for (n, &i) in chosen.iter().enumerate() {
            sql.push_str(if n == 0 { " SET " } else { "," });
            push_ident(&mut sql, T::FIELDS[i].name);
            sql.push_str("=?");
        }
        sql.push_str(" WHERE \"id\"=?");
        let changed = self.on_engine(
            |db| -> Result<usize> {
                let mut stmt = db.prepare_cached(&sql)?;
                for (n, &i) in chosen.iter().enumerate() {
                    if let Some(v) = m.field_value(i) {
                        stmt.raw_bind_parameter(n + 1, v)?;
                    }
                }
                stmt.raw_bind_parameter(chosen.len() + 1, m.id())?;
                stmt.raw_execute().map_err(|e| Error::write(T::TABLE, e))
            },
            |_| {
                let outs: Vec<_> = chosen.iter().filter_map(|&i| m.field_value(i)).collect();
                let mut vals: Vec<ValueRef<'_>> = outs.iter().map(output_ref).collect();
                vals.push(ValueRef::Integer(m.id()));
                let n = self.pg_write(T::TABLE, &sql, &vals, &mut |_| Ok(()))?;
                Ok(n as usize)
            },
        )?;
        self.found::<T>(changed, m.id())
    }

    /// Deletes the row with this id; `NotFound` when there is none.
    pub fn delete<T: Model>(&self, id: i64) -> Result<()> {
        let changed = self.on_engine(
            |db| -> Result<usize> {
                let mut stmt = db.prepare_cached(&T::sql().delete)?;
                stmt.raw_bind_parameter(1, id)?;
                stmt.raw_execute().map_err(|e| Error::write(T::TABLE, e))
            },
            |_| {
                let n = self.pg_write(
                    T::TABLE,
                    &T::sql().delete,
                    &[ValueRef::Integer(id)],
                    &mut |_| Ok(()),
                )?;
                Ok(n as usize)
            },
        )?;
        self.found::<T>(changed, id)
    }

    /// Deletes the rows matching `q`'s filters (its order and window are ignored); returns how
    /// many.
    pub fn delete_where<T: Model>(&self, q: &Query) -> Result<usize> {
        let mut sql = String::from("DELETE FROM ");
        push_ident(&mut sql, T::TABLE);
        q.push_where::<T>(&mut sql, self.is_pg())?;
        self.on_engine(
            |db| {
                let mut stmt = db.prepare_cached(&sql)?;
                bind_values(&mut stmt, 1, q.params())?;
                stmt.raw_execute().map_err(|e| Error::write(T::TABLE, e))
            },
            |_| {
                let vals: Vec<_> = value_refs(q.param_values()).collect();
                let n = self.pg_write(T::TABLE, &sql, &vals, &mut |_| Ok(()))?;
                Ok(n as usize)
            },
        )
    }

    /// Number of rows matching `q`'s filters.
    pub fn count<T: Model>(&self, q: &Query) -> Result<i64> {
        let mut sql = String::from("SELECT count(*) FROM ");
        push_ident(&mut sql, T::TABLE);
        q.push_where::<T>(&mut sql, self.is_pg())?;
        self.on_engine(
            |db| {
                let mut stmt = db.prepare_cached(&sql)?;
                bind_values(&mut stmt, 1, q.params())?;
                let mut rows = stmt.raw_query();
                match rows.next()? {
                    Some(row) => Ok(row.get(0)?),
                    None => Ok(0),
                }
            },
            |_| {
                let vals: Vec<_> = value_refs(q.param_values()).collect();
                let mut n = 0;
                self.pg_run(&sql, &vals, &mut |row| {
                    n = first_integer(&row)?.unwrap_or(0);
                    Ok(())
                })?;
                Ok(n)
            },
        )
    }

    /// Whether a row has this id.
    pub fn exists<T: Model>(&self, id: i64) -> Result<bool> {
        self.on_engine(
            |db| {
                let mut stmt = db.prepare_cached(&T::sql().exists)?;
                stmt.raw_bind_parameter(1, id)?;
                let mut rows = stmt.raw_query();
                Ok(rows.next()?.is_some())
            },
            |_| {
                let mut found = false;
                self.pg_run(&T::sql().exists, &[ValueRef::Integer(id)], &mut |_| {
                    found = true;
                    Ok(())
                })?;
                Ok(found)
            },
        )
    }

    fn found<T: Model>(&self, changed: usize, id: i64) -> Result<()> {
        if changed == 0 {
            Err(Error::NotFound {
                table: T::TABLE,
                id,
            })
        } else {
            Ok(())
        }
    }
}
