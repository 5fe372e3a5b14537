//! [`RowValues`]: a row whose columns read as SQLite `ValueRef`s, on either engine (PostgreSQL's
//! binary values decoded to the SQLite value the ORM reads).

use std::error::Error as StdError;

use postgres_protocol::types as wire;
use postgres_types::Type;
use rusqlite::types::ValueRef;

use crate::error::{Error, Result};
use crate::pg;

/// A row whose columns read as SQLite-style values, on either engine.
#[doc(hidden)]
pub trait RowValues {
    /// Column `i` of the row.
    fn value(&self, i: usize) -> Result<ValueRef<'_>>;
}

impl RowValues for rusqlite::Row<'_> {
    fn value(&self, i: usize) -> Result<ValueRef<'_>> {
        Ok(self.get_ref(i)?)
    }
}

impl RowValues for pg::RowRef<'_> {
    fn value(&self, i: usize) -> Result<ValueRef<'_>> {
        let col = self
            .columns()
            .get(i)
            .ok_or_else(|| pg::Error::Column(format!("#{i}")))?;
        decode(col.type_(), self.raw(i)).map_err(|e| {
            Error::Postgres(pg::Error::Conversion(format!(
                "column {} ({}): {e}",
                col.name(),
                col.type_()
            )))
        })
    }
}

/// The error type `postgres-types` conversions use.
pub(crate) type BoxError = Box<dyn StdError + Sync + Send>;

/// A binary PostgreSQL value as the SQLite value the ORM reads.
fn decode<'a>(ty: &Type, raw: Option<&'a [u8]>) -> std::result::Result<ValueRef<'a>, BoxError> {
    let Some(raw) = raw else {
        return Ok(ValueRef::Null);
    };
    Ok(match *ty {
        Type::INT8 => ValueRef::Integer(wire::int8_from_sql(raw)?),
        Type::INT4 => ValueRef::Integer(i64::from(wire::int4_from_sql(raw)?)),
        Type::INT2 => ValueRef::Integer(i64::from(wire::int2_from_sql(raw)?)),
        Type::OID => ValueRef::Integer(i64::from(wire::oid_from_sql(raw)?)),
        Type::BOOL => ValueRef::Integer(i64::from(wire::bool_from_sql(raw)?)),
        Type::FLOAT8 => ValueRef::Real(wire::float8_from_sql(raw)?),
        Type::FLOAT4 => ValueRef::Real(f64::from(wire::float4_from_sql(raw)?)),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON => {
            ValueRef::Text(raw)
        }
        Type::BYTEA => ValueRef::Blob(raw),
        _ => return Err(format!("type {ty} is not supported by the ORM").into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_values_decode_as_sqlite_values() {
        assert_eq!(
            decode(&Type::BOOL, Some(&[1])).unwrap(),
            ValueRef::Integer(1)
        );
        assert_eq!(decode(&Type::INT8, None).unwrap(), ValueRef::Null);
    }
}
