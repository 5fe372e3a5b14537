//! Field types: how a Rust value maps to a SQLite or PostgreSQL column and to JSON.
//!
//! Supported out of the box: `i64`, `i32`, `f64`, `bool`, `String`, `Vec<u8>` (base64 in JSON),
//! `Option<T>` of those (a nullable column), and the automatic timestamps [`CreateTime`] and
//! [`ModTime`] (Unix milliseconds, filled by the ORM on add / on every write).

use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::types::{FromSql, FromSqlResult, ToSqlOutput, ValueRef};
use serde_json::Value as JsonValue;

use moria_crypto::encoding::from_base64;

/// Storage class of a column, which also decides its JSON form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// 64-bit integer (`INTEGER`), a JSON number.
    Integer,
    /// Double (`REAL`), a JSON number.
    Real,
    /// UTF-8 text (`TEXT`), a JSON string.
    Text,
    /// Bytes (`BLOB`), a base64 JSON string.
    Blob,
    /// Boolean stored as 0/1 (`INTEGER`), JSON `true`/`false`.
    Bool,
}

impl FieldType {
    /// SQL type used in `CREATE TABLE`.
    pub const fn sql(self) -> &'static str {
        match self {
            FieldType::Integer | FieldType::Bool => "INTEGER",
            FieldType::Real => "REAL",
            FieldType::Text => "TEXT",
            FieldType::Blob => "BLOB",
        }
    }

    /// PostgreSQL type used in `CREATE TABLE`.
    pub const fn pg_sql(self) -> &'static str {
        match self {
            FieldType::Integer => "bigint",
            FieldType::Bool => "boolean",
            FieldType::Real => "double precision",
            FieldType::Text => "text",
            FieldType::Blob => "bytea",
        }
    }

    /// PostgreSQL default of a NOT NULL column.
    pub(crate) const fn pg_zero(self) -> &'static str {
        match self {
            FieldType::Integer => "0",
            FieldType::Bool => "false",
            FieldType::Real => "0",
            FieldType::Text => "''",
            FieldType::Blob => "''::bytea",
        }
    }

    /// The value a NOT NULL column gets when it is added to a table that already has rows.
    pub(crate) const fn zero(self) -> &'static str {
        match self {
            FieldType::Integer | FieldType::Bool => "0",
            FieldType::Real => "0.0",
            FieldType::Text => "''",
            FieldType::Blob => "x''",
        }
    }

    /// What a JSON value must look like, for error messages.
    pub const fn expected(self, nullable: bool) -> &'static str {
        match (self, nullable) {
            (FieldType::Integer, false) => "an integer",
            (FieldType::Integer, true) => "an integer or null",
            (FieldType::Real, false) => "a number",
            (FieldType::Real, true) => "a number or null",
            (FieldType::Text, false) => "a string",
            (FieldType::Text, true) => "a string or null",
            (FieldType::Blob, false) => "a base64 string",
            (FieldType::Blob, true) => "a base64 string or null",
            (FieldType::Bool, false) => "a boolean",
            (FieldType::Bool, true) => "a boolean or null",
        }
    }
}

/// When the ORM fills a field by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auto {
    /// Never: the field holds what the program put there.
    No,
    /// Set to the current time when the row is added.
    OnCreate,
    /// Set to the current time when the row is added and on every update.
    OnChange,
}

/// One column of a model, as declared by [`model!`](crate::model).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldDef {
    /// Column name (the Rust field name).
    pub name: &'static str,
    /// Storage class.
    pub ty: FieldType,
    /// Whether NULL is allowed (`Option<T>`).
    pub nullable: bool,
    /// Whether a UNIQUE index covers the column.
    pub unique: bool,
    /// Whether a plain index covers the column.
    pub indexed: bool,
    /// Automatic timestamp behaviour.
    pub auto: Auto,
}

impl FieldDef {
    /// Describes a field of Rust type `T` named `name`.
    pub const fn of<T: Field>(name: &'static str) -> Self {
        FieldDef {
            name,
            ty: T::TYPE,
            nullable: T::NULLABLE,
            unique: false,
            indexed: false,
            auto: T::AUTO,
        }
    }

    /// Adds a UNIQUE index (field option `[unique]`).
    pub const fn unique(mut self) -> Self {
        self.unique = true;
        self
    }

    /// Adds a plain index (field option `[index]`).
    pub const fn index(mut self) -> Self {
        self.indexed = true;
        self
    }

    /// What JSON value this field accepts, for error messages.
    pub const fn expected(&self) -> &'static str {
        self.ty.expected(self.nullable)
    }
}

/// A Rust type that can be a model field.
pub trait Field: Default + Clone + Send + 'static {
    /// Storage class.
    const TYPE: FieldType;
    /// Whether the column accepts NULL.
    const NULLABLE: bool = false;
    /// Automatic timestamp behaviour.
    const AUTO: Auto = Auto::No;
    /// The value to bind, borrowed when possible.
    fn to_sql(&self) -> ToSqlOutput<'_>;
    /// Reads a column value.
    fn from_sql(value: ValueRef<'_>) -> FromSqlResult<Self>;
    /// Reads a column value into `self`, reusing its allocation when it has one.
    fn read_into(&mut self, value: ValueRef<'_>) -> FromSqlResult<()> {
        *self = Self::from_sql(value)?;
        Ok(())
    }
    /// Converts a JSON value; `None` when the JSON type does not fit.
    fn from_json(value: &JsonValue) -> Option<Self>;
    /// Refreshes an automatic timestamp (`now` in Unix milliseconds).
    fn touch(&mut self, _now: i64, _creating: bool) {}
}

impl Field for i64 {
    const TYPE: FieldType = FieldType::Integer;
    fn to_sql(&self) -> ToSqlOutput<'_> {
        ToSqlOutput::Borrowed(ValueRef::Integer(*self))
    }
    fn from_sql(value: ValueRef<'_>) -> FromSqlResult<Self> {
        i64::column_result(value)
    }
    fn from_json(value: &JsonValue) -> Option<Self> {
        value.as_i64()
    }
}

impl Field for i32 {
    const TYPE: FieldType = FieldType::Integer;
    fn to_sql(&self) -> ToSqlOutput<'_> {
        ToSqlOutput::Borrowed(ValueRef::Integer(i64::from(*self)))
    }
    fn from_sql(value: ValueRef<'_>) -> FromSqlResult<Self> {
        i32::column_result(value)
    }
    fn from_json(value: &JsonValue) -> Option<Self> {
        value.as_i64().and_then(|v| i32::try_from(v).ok())
    }
}

impl Field for f64 {
    const TYPE: FieldType = FieldType::Real;
    fn to_sql(&self) -> ToSqlOutput<'_> {
        ToSqlOutput::Borrowed(ValueRef::Real(*self))
    }
    fn from_sql(value: ValueRef<'_>) -> FromSqlResult<Self> {
        f64::column_result(value)
    }
    fn from_json(value: &JsonValue) -> Option<Self> {
        value.as_f64()
    }
}

impl Field for bool {
    const TYPE: FieldType = FieldType::Bool;
    fn to_sql(&self) -> ToSqlOutput<'_> {
        ToSqlOutput::Borrowed(ValueRef::Integer(i64::from(*self)))
    }
    fn from_sql(value: ValueRef<'_>) -> FromSqlResult<Self> {
        bool::column_result(value)
    }
    fn from_json(value: &JsonValue) -> Option<Self> {
        value.as_bool()
    }
}

impl Field for String {
    const TYPE: FieldType = FieldType::Text;
    fn to_sql(&self) -> ToSqlOutput<'_> {
        ToSqlOutput::Borrowed(ValueRef::Text(self.as_bytes()))
    }
    fn from_sql(value: ValueRef<'_>) -> FromSqlResult<Self> {
        String::column_result(value)
    }
    fn read_into(&mut self, value: ValueRef<'_>) -> FromSqlResult<()> {
        let text = value.as_str()?;
        self.clear();
        self.push_str(text);
        Ok(())
    }
    fn from_json(value: &JsonValue) -> Option<Self> {
        value.as_str().map(str::to_owned)
    }
}

impl Field for Vec<u8> {
    const TYPE: FieldType = FieldType::Blob;
    fn to_sql(&self) -> ToSqlOutput<'_> {
        ToSqlOutput::Borrowed(ValueRef::Blob(self))
    }
    fn from_sql(value: ValueRef<'_>) -> FromSqlResult<Self> {
        Vec::<u8>::column_result(value)
    }
    fn read_into(&mut self, value: ValueRef<'_>) -> FromSqlResult<()> {
        let bytes = value.as_blob()?;
        self.clear();
        self.extend_from_slice(bytes);
        Ok(())
    }
    fn from_json(value: &JsonValue) -> Option<Self> {
        value.as_str().and_then(from_base64)
    }
}

impl<T: Field> Field for Option<T> {
    const TYPE: FieldType = T::TYPE;
    const NULLABLE: bool = true;
    const AUTO: Auto = T::AUTO;
    fn to_sql(&self) -> ToSqlOutput<'_> {
        match self {
            Some(v) => v.to_sql(),
            None => ToSqlOutput::Borrowed(ValueRef::Null),
        }
    }
    fn from_sql(value: ValueRef<'_>) -> FromSqlResult<Self> {
        match value {
            ValueRef::Null => Ok(None),
            v => T::from_sql(v).map(Some),
        }
    }
    fn from_json(value: &JsonValue) -> Option<Self> {
        match value {
            JsonValue::Null => Some(None),
            v => T::from_json(v).map(Some),
        }
    }
    fn touch(&mut self, now: i64, creating: bool) {
        if T::AUTO != Auto::No {
            self.get_or_insert_with(T::default).touch(now, creating);
        }
    }
}

/// Current time in Unix milliseconds, the value of automatic timestamps.
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

macro_rules! timestamp {
    ($(#[$doc:meta])* $name:ident, $auto:expr, $creating_only:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub i64);

        impl Field for $name {
            const TYPE: FieldType = FieldType::Integer;
            const AUTO: Auto = $auto;
            fn to_sql(&self) -> ToSqlOutput<'_> {
                ToSqlOutput::Borrowed(ValueRef::Integer(self.0))
            }
            fn from_sql(value: ValueRef<'_>) -> FromSqlResult<Self> {
                i64::column_result(value).map($name)
            }
            fn from_json(value: &JsonValue) -> Option<Self> {
                value.as_i64().map($name)
            }
            fn touch(&mut self, now: i64, creating: bool) {
                if creating || !$creating_only {
                    self.0 = now;
                }
            }
        }
    };
}

timestamp!(
    /// Unix milliseconds set by the ORM when the row is added (mORMot's `TCreateTime`).
    CreateTime,
    Auto::OnCreate,
    true
);
timestamp!(
    /// Unix milliseconds set by the ORM on add and on every update (mORMot's `TModTime`).
    ModTime,
    Auto::OnChange,
    false
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_of_timestamp_is_filled() {
        let mut t: Option<ModTime> = None;
        t.touch(42, false);
        assert_eq!(t, Some(ModTime(42)));
        let mut c = CreateTime(1);
        c.touch(42, false);
        assert_eq!(c, CreateTime(1), "create time is kept on update");
        c.touch(43, true);
        assert_eq!(c, CreateTime(43));
    }

    #[test]
    fn json_conversions_are_strict() {
        assert_eq!(i64::from_json(&JsonValue::from(5)), Some(5));
        assert_eq!(i64::from_json(&JsonValue::from("5")), None);
        assert_eq!(i32::from_json(&JsonValue::from(i64::MAX)), None);
        assert_eq!(f64::from_json(&JsonValue::from(2)), Some(2.0));
        assert_eq!(bool::from_json(&JsonValue::from(1)), None);
        assert_eq!(String::from_json(&JsonValue::Null), None);
        assert_eq!(Option::<String>::from_json(&JsonValue::Null), Some(None));
        assert_eq!(
            Vec::<u8>::from_json(&JsonValue::from("AAE=")),
            Some(vec![0, 1])
        );
        assert_eq!(Vec::<u8>::from_json(&JsonValue::from("AAE")), None);
    }

    #[test]
    fn string_read_into_reuses_buffer_and_rejects_blobs() {
        let mut s = String::with_capacity(64);
        s.read_into(ValueRef::Text(b"abc")).unwrap();
        assert_eq!(s, "abc");
        assert!(s.capacity() >= 64);
        assert!(s.read_into(ValueRef::Blob(b"x")).is_err());
    }

    #[test]
    fn field_def_options_chain() {
        let d = FieldDef::of::<Option<String>>("name").unique().index();
        assert!(d.unique && d.indexed && d.nullable);
        assert_eq!(d.expected(), "a string or null");
    }
}
