//! The [`Model`] trait and the [`model!`](crate::model) macro that declares one.
//!
//! A model is a struct with an `id: i64` primary key (0 until the row is added) and fields whose
//! types implement [`Field`](crate::Field). The macro writes the struct and the whole `Model`
//! impl; nothing is derived at run time except the SQL text, built once per type.

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::Statement;
use serde_json::Value as JsonValue;

use crate::error::{Error, Result};
use crate::field::FieldDef;
use crate::row_values::RowValues;
use crate::sql::SqlTexts;

/// A struct mapped to a table. Implement it with [`model!`](crate::model).
pub trait Model: Default + Clone + Send + 'static {
    /// Table name.
    const TABLE: &'static str;
    /// Columns after `id`, in declaration order.
    const FIELDS: &'static [FieldDef];
    /// The row id, 0 for a row not yet added.
    fn id(&self) -> i64;
    /// Sets the row id.
    fn set_id(&mut self, id: i64);
    /// Binds every field, in order, starting at parameter `first`; returns the next free index.
    fn bind_fields(&self, stmt: &mut Statement<'_>, first: usize) -> rusqlite::Result<usize>;
    /// Reads every field, in order, from the row's columns starting at `first`.
    fn read_fields<R: RowValues + ?Sized>(&mut self, row: &R, first: usize) -> Result<()>;
    /// The value of field number `index` (into [`Model::FIELDS`]).
    fn field_value(&self, index: usize) -> Option<ToSqlOutput<'_>>;
    /// Sets field number `index` from JSON; false when the JSON type does not fit.
    fn set_field_json(&mut self, index: usize, value: &JsonValue) -> bool;
    /// Refreshes automatic timestamps (`now` in Unix milliseconds).
    fn touch(&mut self, now: i64, creating: bool);
    /// The model's SQL statements, built on first use.
    #[doc(hidden)]
    fn sql() -> &'static SqlTexts;
}

/// Index of the field called `name`, or `UnknownField`.
pub(crate) fn field_index<T: Model>(name: &str) -> Result<usize> {
    T::FIELDS
        .iter()
        .position(|f| f.name == name)
        .ok_or_else(|| Error::UnknownField {
            table: T::TABLE,
            field: name.to_owned(),
        })
}

/// Reads a whole model (id in column 0, fields after it).
pub(crate) fn from_row<T: Model, R: RowValues + ?Sized>(row: &R) -> Result<T> {
    let mut m = T::default();
    fill_from_row(&mut m, row)?;
    Ok(m)
}

/// Reads a whole row into an existing model, reusing its buffers.
pub(crate) fn fill_from_row<T: Model, R: RowValues + ?Sized>(m: &mut T, row: &R) -> Result<()> {
    let id = match row.value(0)? {
        ValueRef::Integer(id) => id,
        _ => {
            return Err(Error::column(
                T::TABLE,
                "id",
                rusqlite::types::FromSqlError::InvalidType,
            ))
        }
    };
    m.set_id(id);
    m.read_fields(row, 1)
}

/// Declares a model: the struct (with `pub id: i64` first) and its [`Model`] impl.
///
/// ```
/// moria_orm::model! {
///     /// A customer.
///     pub struct Customer as "Customers" {
///         pub name: String [unique],
///         pub city: String [index],
///         pub balance: f64,
///         pub note: Option<String>,
///         pub changed: moria_orm::ModTime,
///     }
/// }
/// let c = Customer { name: "Ada".into(), ..Default::default() };
/// assert_eq!(<Customer as moria_orm::Model>::TABLE, "Customers");
/// assert_eq!(c.id, 0);
/// ```
///
/// The table is named after the struct unless `as "Name"` follows it. Field options in brackets:
/// `unique` (UNIQUE index) and `index`. The macro derives `Debug, Clone, Default, PartialEq`.
#[macro_export]
macro_rules! model {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident $(as $table:literal)? {
            $(
                $(#[$fmeta:meta])*
                $fvis:vis $field:ident : $fty:ty $([$($opt:ident),* $(,)?])?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        $vis struct $name {
            /// Row id: 0 until the row is added.
            pub id: i64,
            $( $(#[$fmeta])* $fvis $field: $fty, )*
        }

        impl $crate::Model for $name {
            const TABLE: &'static str = $crate::__model_table!(stringify!($name); $($table)?);
            const FIELDS: &'static [$crate::FieldDef] = &[
                $( $crate::FieldDef::of::<$fty>(stringify!($field)) $($(.$opt())*)? ),*
            ];

            fn id(&self) -> i64 {
                self.id
            }

            fn set_id(&mut self, id: i64) {
                self.id = id;
            }

            fn bind_fields(
                &self,
                _stmt: &mut $crate::rusqlite::Statement<'_>,
                first: usize,
            ) -> $crate::rusqlite::Result<usize> {
                let mut _i = first;
                $(
                    _stmt.raw_bind_parameter(_i, $crate::Field::to_sql(&self.$field))?;
                    _i += 1;
                )*
                Ok(_i)
            }

            fn read_fields<R: $crate::RowValues + ?Sized>(
                &mut self,
                _row: &R,
                first: usize,
            ) -> $crate::Result<()> {
                let mut _i = first;
                $(
                    $crate::Field::read_into(&mut self.$field, _row.value(_i)?).map_err(|e| {
                        $crate::Error::column(<Self as $crate::Model>::TABLE, stringify!($field), e)
                    })?;
                    _i += 1;
                )*
                Ok(())
            }

            fn field_value(&self, index: usize) -> Option<$crate::rusqlite::types::ToSqlOutput<'_>> {
                #[allow(non_camel_case_types, dead_code)]
                enum __Index { $($field),* }
                $(
                    if index == __Index::$field as usize {
                        return Some($crate::Field::to_sql(&self.$field));
                    }
                )*
                let _ = index;
                None
            }

            fn set_field_json(&mut self, index: usize, value: &$crate::serde_json::Value) -> bool {
                #[allow(non_camel_case_types, dead_code)]
                enum __Index { $($field),* }
                $(
                    if index == __Index::$field as usize {
                        return match $crate::Field::from_json(value) {
                            Some(v) => {
                                self.$field = v;
                                true
                            }
                            None => false,
                        };
                    }
                )*
                let _ = (index, value);
                false
            }

            fn touch(&mut self, _now: i64, _creating: bool) {
                $( $crate::Field::touch(&mut self.$field, _now, _creating); )*
            }

            fn sql() -> &'static $crate::SqlTexts {
                static SQL: ::std::sync::OnceLock<$crate::SqlTexts> = ::std::sync::OnceLock::new();
                SQL.get_or_init(|| {
                    $crate::SqlTexts::new(
                        <Self as $crate::Model>::TABLE,
                        <Self as $crate::Model>::FIELDS,
                    )
                })
            }
        }
    };
}

/// Picks the table name: the override when given, else the struct name.
#[doc(hidden)]
#[macro_export]
macro_rules! __model_table {
    ($default:expr;) => {
        $default
    };
    ($default:expr; $table:literal) => {
        $table
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CreateTime, FieldType, ModTime};

    crate::model! {
        /// Every supported type once.
        pub struct Every {
            pub i: i64 [unique],
            pub small: i32 [index],
            pub f: f64,
            pub b: bool,
            pub s: String,
            pub bytes: Vec<u8>,
            pub maybe: Option<String>,
            pub created: CreateTime,
            pub changed: ModTime,
        }
    }

    crate::model! {
        struct Empty as "Nothing" {}
    }

    #[test]
    fn fields_are_described_in_order() {
        let names: Vec<_> = Every::FIELDS.iter().map(|f| f.name).collect();
        assert_eq!(
            names,
            ["i", "small", "f", "b", "s", "bytes", "maybe", "created", "changed"]
        );
        assert!(Every::FIELDS[0].unique && !Every::FIELDS[0].indexed);
        assert!(Every::FIELDS[1].indexed);
        assert_eq!(Every::FIELDS[3].ty, FieldType::Bool);
        assert!(Every::FIELDS[6].nullable);
        assert_eq!(Every::TABLE, "Every");
        assert_eq!(Empty::TABLE, "Nothing");
        assert!(Empty::FIELDS.is_empty());
    }

    #[test]
    fn field_access_by_index_and_name() {
        let mut e = Every::default();
        assert!(e.set_field_json(4, &JsonValue::from("x")));
        assert!(!e.set_field_json(4, &JsonValue::from(1)));
        assert!(!e.set_field_json(99, &JsonValue::from(1)));
        assert_eq!(e.s, "x");
        assert_eq!(field_index::<Every>("maybe").unwrap(), 6);
        assert!(matches!(
            field_index::<Every>("nope"),
            Err(Error::UnknownField { .. })
        ));
        assert!(e.field_value(8).is_some() && e.field_value(9).is_none());
    }

    #[test]
    fn touch_sets_timestamps() {
        let mut e = Every::default();
        e.touch(10, true);
        assert_eq!((e.created, e.changed), (CreateTime(10), ModTime(10)));
        e.touch(20, false);
        assert_eq!((e.created, e.changed), (CreateTime(10), ModTime(20)));
    }
}
