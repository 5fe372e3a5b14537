//! One model exposed over REST: the type-erased operations the router calls.

use std::marker::PhantomData;

use rusqlite::types::Value;
use serde_json::Value as JsonValue;

use super::params::ListParams;
use crate::batch::Batch;
use crate::conn::Conn;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::field::{Auto, FieldType};
use crate::json::{merge_json_value, JsonFormat};
use crate::model::{field_index, Model};
use crate::query::Query;
use moria_crypto::encoding::from_base64;

/// Work prepared on the fiber (JSON parsed and checked) and run later on a connection.
pub(crate) type BatchJob = Box<dyn FnOnce(&Conn) -> Result<Vec<i64>> + Send>;

/// What the router can do with a table.
pub(crate) trait Resource: Send + Sync {
    fn name(&self) -> &'static str;
    fn get(&self, db: &Db, id: i64) -> Result<Vec<u8>>;
    fn list(&self, db: &Db, params: ListParams, max_rows: i64) -> Result<Vec<u8>>;
    fn create(&self, db: &Db, body: JsonValue) -> Result<i64>;
    fn update(&self, db: &Db, id: i64, body: JsonValue) -> Result<Vec<u8>>;
    fn delete(&self, db: &Db, id: i64) -> Result<()>;
    fn prepare_batch(&self, ops: &JsonValue) -> Result<BatchJob>;
}

/// The [`Resource`] of model `T`.
pub(crate) struct Table<T>(PhantomData<fn() -> T>);

impl<T> Table<T> {
    pub(crate) fn new() -> Self {
        Table(PhantomData)
    }
}

fn bad(msg: impl Into<String>) -> Error {
    Error::BadRequest(msg.into())
}

/// A URL value typed by the field it is compared with.
fn typed_value<T: Model>(field: &str, text: &str) -> Result<Value> {
    let ty = if field == "id" {
        FieldType::Integer
    } else {
        T::FIELDS[field_index::<T>(field)?].ty
    };
    let wrong = || Error::WrongType {
        table: T::TABLE,
        field: field.to_owned(),
        expected: ty.expected(false),
    };
    Ok(match ty {
        FieldType::Integer => Value::Integer(text.parse().map_err(|_| wrong())?),
        FieldType::Real => Value::Real(text.parse().map_err(|_| wrong())?),
        FieldType::Bool => match text {
            "true" | "1" => Value::Integer(1),
            "false" | "0" => Value::Integer(0),
            _ => return Err(wrong()),
        },
        FieldType::Text => Value::Text(text.to_owned()),
        FieldType::Blob => Value::Blob(from_base64(text).ok_or_else(wrong)?),
    })
}

/// A model from a JSON object whose `id`, if any, must be `expect_id`.
fn model_from<T: Model>(body: &JsonValue) -> Result<(T, Vec<&'static str>)> {
    let mut m = T::default();
    let set = merge_json_value(&mut m, body)?;
    Ok((m, set))
}

/// Fields a client may write: automatic timestamps are the ORM's.
fn writable<T: Model>(names: Vec<&'static str>) -> Vec<&'static str> {
    names
        .into_iter()
        .filter(|n| T::FIELDS.iter().any(|f| f.name == *n && f.auto == Auto::No))
        .collect()
}

/// Reads row `id`, applies the JSON fields, writes them back; inside the caller's transaction.
fn merge_update<T: Model>(c: &Conn, id: i64, body: &JsonValue) -> Result<()> {
    let mut m: T = c.get(id)?;
    let set = merge_json_value(&mut m, body)?;
    if m.id() != id {
        return Err(bad(format!("body id {} differs from URL id {id}", m.id())));
    }
    c.update_fields(&mut m, &writable::<T>(set))
}

enum RestOp<T> {
    Add(T),
    Put(i64, JsonValue),
    Delete(i64),
}

fn id_of(v: &JsonValue, what: &str) -> Result<i64> {
    v.as_i64()
        .filter(|id| *id > 0)
        .ok_or_else(|| bad(format!("{what}: expected a positive integer id")))
}

/// Parses mORMot's batch list `["POST",{…},"PUT",{…},"DELETE",id,"SIMPLE",[…]]`.
fn parse_ops<T: Model>(ops: &JsonValue) -> Result<Vec<RestOp<T>>> {
    let list = ops
        .as_array()
        .ok_or_else(|| bad(format!("batch for {}: expected an array", T::TABLE)))?;
    if list.len() % 2 != 0 {
        return Err(bad(format!("batch for {}: verb without a value", T::TABLE)));
    }
    let mut out = Vec::with_capacity(list.len() / 2);
    for pair in list.chunks(2) {
        let (verb, value) = (&pair[0], &pair[1]);
        out.push(match verb.as_str() {
            Some("POST") => RestOp::Add(model_from::<T>(value)?.0),
            Some("SIMPLE") => {
                let values = value
                    .as_array()
                    .filter(|v| v.len() == T::FIELDS.len())
                    .ok_or_else(|| {
                        bad(format!(
                            "SIMPLE for {}: expected {} values in field order",
                            T::TABLE,
                            T::FIELDS.len()
                        ))
                    })?;
                let mut m = T::default();
                for (i, v) in values.iter().enumerate() {
                    if !m.set_field_json(i, v) {
                        return Err(Error::WrongType {
                            table: T::TABLE,
                            field: T::FIELDS[i].name.into(),
                            expected: T::FIELDS[i].expected(),
                        });
                    }
                }
                RestOp::Add(m)
            }
            Some("PUT") => {
                let id = value
                    .get("id")
                    .map(|v| id_of(v, "PUT"))
                    .unwrap_or_else(|| Err(bad("PUT: the object needs an id")))?;
                // Checked now, so a malformed object fails before any write.
                model_from::<T>(value)?;
                RestOp::Put(id, value.clone())
            }
            Some("DELETE") => RestOp::Delete(id_of(value, "DELETE")?),
            _ => {
                return Err(bad(format!(
                    "batch verb {verb}: POST, SIMPLE, PUT or DELETE"
                )))
            }
        });
    }
    Ok(out)
}

/// Runs parsed operations in order; runs of adds go out as one multi-row batch.
fn run_ops<T: Model>(c: &Conn, ops: Vec<RestOp<T>>) -> Result<Vec<i64>> {
    let mut ids = Vec::with_capacity(ops.len());
    let mut adds = Batch::new();
    let flush = |adds: &mut Batch<T>, ids: &mut Vec<i64>| -> Result<()> {
        if !adds.is_empty() {
            ids.extend(c.batch_send(adds)?);
            *adds = Batch::new();
        }
        Ok(())
    };
    for op in ops {
        match op {
            RestOp::Add(m) => adds.add(m),
            RestOp::Put(id, body) => {
                flush(&mut adds, &mut ids)?;
                merge_update::<T>(c, id, &body)?;
                ids.push(id);
            }
            RestOp::Delete(id) => {
                flush(&mut adds, &mut ids)?;
                c.delete::<T>(id)?;
                ids.push(id);
            }
        }
    }
    flush(&mut adds, &mut ids)?;
    Ok(ids)
}

impl<T: Model> Resource for Table<T> {
    fn name(&self) -> &'static str {
        T::TABLE
    }

    fn get(&self, db: &Db, id: i64) -> Result<Vec<u8>> {
        db.json_by_id::<T>(id)
    }

    fn list(&self, db: &Db, p: ListParams, max_rows: i64) -> Result<Vec<u8>> {
        let limit = p.limit.unwrap_or(max_rows);
        if limit > max_rows {
            return Err(bad(format!(
                "limit {limit} exceeds the maximum of {max_rows}"
            )));
        }
        let mut q = Query::new().limit(limit);
        if let Some(off) = p.offset {
            q = q.offset(off);
        }
        if let Some(sel) = &p.select {
            let names: Vec<&str> = sel.iter().map(String::as_str).collect();
            q = q.select(&names);
        }
        for (field, op, text) in &p.filters {
            q = q.filter(field, *op, typed_value::<T>(field, text)?);
        }
        for (field, order) in &p.sort {
            q = q.order_by(field, *order);
        }
        let format = if p.compact {
            JsonFormat::Compact
        } else {
            JsonFormat::Expanded
        };
        db.json::<T>(q, format)
    }

    fn create(&self, db: &Db, body: JsonValue) -> Result<i64> {
        let (m, _) = model_from::<T>(&body)?;
        Ok(db.add(m)?.id())
    }

    fn update(&self, db: &Db, id: i64, body: JsonValue) -> Result<Vec<u8>> {
        model_from::<T>(&body)?;
        db.transaction(move |c| {
            merge_update::<T>(c, id, &body)?;
            let mut out = Vec::with_capacity(128);
            c.write_json_by_id::<T, _>(id, &mut out)?;
            Ok(out)
        })
    }

    fn delete(&self, db: &Db, id: i64) -> Result<()> {
        db.delete::<T>(id)
    }

    fn prepare_batch(&self, ops: &JsonValue) -> Result<BatchJob> {
        let ops = parse_ops::<T>(ops)?;
        Ok(Box::new(move |c: &Conn| run_ops(c, ops)))
    }
}
