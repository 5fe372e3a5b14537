//! [`Query`]: which rows, in which order, which columns — with every value bound, never spliced.
//!
//! Field names are checked against the model when the query runs (an unknown name is
//! `Error::UnknownField`). A raw WHERE fragment is accepted for what the builder cannot say,
//! but it may not contain string literals, comments or `;`: values go through `?`.

use rusqlite::types::{ToSql, ToSqlOutput, Value};

use crate::error::{Error, Result};
use crate::model::{field_index, Model};
use crate::sql::{push_columns, push_ident};

/// A comparison in a filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `=`
    Eq,
    /// `<>`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `LIKE` (`%` and `_` wildcards in the bound value)
    Like,
}

impl Op {
    fn sql(self, pg: bool) -> &'static str {
        match self {
            // SQLite's LIKE ignores ASCII case; PostgreSQL's ILIKE matches that.
            Op::Like if pg => " ILIKE ",
            Op::Eq => "=",
            Op::Ne => "<>",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Like => " LIKE ",
        }
    }
}

/// Sort direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    /// Ascending.
    #[default]
    Asc,
    /// Descending.
    Desc,
}

#[derive(Clone, Debug)]
enum Filter {
    Cmp(String, Op),
    Null(String, bool),
    Sql(String),
}

/// Which rows (AND of filters), their order, a window, and optionally which columns.
#[derive(Clone, Debug, Default)]
pub struct Query {
    filters: Vec<Filter>,
    params: Vec<Value>,
    order: Vec<(String, Order)>,
    limit: Option<i64>,
    offset: Option<i64>,
    select: Option<Vec<String>>,
    error: Option<Pending>,
}

/// A builder mistake kept until the query runs (builders do not return `Result`).
#[derive(Clone, Debug)]
enum Pending {
    ParamCount(usize, usize),
    Value(String),
}

/// Converts any `ToSql` into an owned value that can cross threads.
fn owned(value: &dyn ToSql) -> std::result::Result<Value, String> {
    match value.to_sql().map_err(|e| e.to_string())? {
        ToSqlOutput::Borrowed(v) => Value::try_from(v).map_err(|e| e.to_string()),
        ToSqlOutput::Owned(v) => Ok(v),
        _ => Err("unsupported parameter kind".into()),
    }
}

/// Whether a raw fragment is free of literals, comments and statement separators.
fn fragment_is_safe(sql: &str) -> bool {
    !(sql.contains('\'')
        || sql.contains(';')
        || sql.contains("--")
        || sql.contains("/*")
        || sql.contains('\0'))
}

impl Query {
    /// Every row, in storage order.
    pub fn new() -> Self {
        Query::default()
    }

    fn bind(mut self, value: &dyn ToSql) -> Self {
        match owned(value) {
            Ok(v) => self.params.push(v),
            Err(e) => self.error = Some(Pending::Value(e)),
        }
        self
    }

    /// Keeps rows where `field op value`.
    pub fn filter(mut self, field: &str, op: Op, value: impl ToSql) -> Self {
        self.filters.push(Filter::Cmp(field.to_owned(), op));
        self.bind(&value)
    }

    /// Keeps rows where `field = value`.
    pub fn eq(self, field: &str, value: impl ToSql) -> Self {
        self.filter(field, Op::Eq, value)
    }

    /// Keeps rows where `field` is NULL (`true`) or not NULL (`false`).
    pub fn null(mut self, field: &str, is_null: bool) -> Self {
        self.filters.push(Filter::Null(field.to_owned(), is_null));
        self
    }

    /// Keeps rows matching a raw SQL condition whose values are `?` placeholders bound to `params`.
    pub fn sql(mut self, condition: &str, params: &[&dyn ToSql]) -> Self {
        self.filters.push(Filter::Sql(condition.to_owned()));
        let placeholders = condition.matches('?').count();
        if placeholders != params.len() {
            self.error = Some(Pending::ParamCount(placeholders, params.len()));
            return self;
        }
        params.iter().fold(self, |q, p| q.bind(*p))
    }

    /// Sorts by `field` (then by earlier sort keys' ties).
    pub fn order_by(mut self, field: &str, order: Order) -> Self {
        self.order.push((field.to_owned(), order));
        self
    }

    /// At most `n` rows.
    pub fn limit(mut self, n: i64) -> Self {
        self.limit = Some(n);
        self
    }

    /// Skips the first `n` rows.
    pub fn offset(mut self, n: i64) -> Self {
        self.offset = Some(n);
        self
    }

    /// Only these columns in JSON output (`id` is always allowed).
    pub fn select(mut self, fields: &[&str]) -> Self {
        self.select = Some(fields.iter().map(|s| (*s).to_owned()).collect());
        self
    }

    /// The selected columns as indexes into the row (0 = id, i+1 = field i), or all.
    pub(crate) fn columns<T: Model>(&self) -> Result<Vec<usize>> {
        match &self.select {
            None => Ok((0..=T::FIELDS.len()).collect()),
            Some(names) => names.iter().map(|n| column_index::<T>(n)).collect(),
        }
    }

    /// Bound values in placeholder order (filters, then limit/offset).
    pub(crate) fn params(&self) -> impl Iterator<Item = &Value> {
        self.params.iter()
    }

    /// Bound values in placeholder order, as a slice.
    pub(crate) fn param_values(&self) -> &[Value] {
        &self.params
    }

    /// Appends ` WHERE …` after validating every name.
    pub(crate) fn push_where<T: Model>(&self, sql: &mut String, pg: bool) -> Result<()> {
        match &self.error {
            Some(Pending::ParamCount(placeholders, values)) => {
                return Err(Error::ParamCount {
                    placeholders: *placeholders,
                    values: *values,
                })
            }
            Some(Pending::Value(e)) => return Err(Error::Config(format!("bad query value: {e}"))),
            None => {}
        }
        for (i, f) in self.filters.iter().enumerate() {
            sql.push_str(if i == 0 { " WHERE " } else { " AND " });
            match f {
                Filter::Cmp(name, op) => {
                    push_ident(sql, column_name::<T>(name)?);
                    sql.push_str(op.sql(pg));
                    sql.push('?');
                }
                Filter::Null(name, is_null) => {
                    push_ident(sql, column_name::<T>(name)?);
                    sql.push_str(if *is_null { " IS NULL" } else { " IS NOT NULL" });
                }
                Filter::Sql(cond) => {
                    if !fragment_is_safe(cond) {
                        return Err(Error::UnsafeSql(cond.clone()));
                    }
                    sql.push('(');
                    sql.push_str(cond);
                    sql.push(')');
                }
            }
        }
        Ok(())
    }

    /// Appends ` WHERE … ORDER BY … LIMIT ? OFFSET ?`; returns the limit/offset values to bind
    /// after [`Query::params`].
    pub(crate) fn push_tail<T: Model>(&self, sql: &mut String, pg: bool) -> Result<Vec<Value>> {
        self.push_where::<T>(sql, pg)?;
        for (i, (name, order)) in self.order.iter().enumerate() {
            sql.push_str(if i == 0 { " ORDER BY " } else { "," });
            push_ident(sql, column_name::<T>(name)?);
            if *order == Order::Desc {
                sql.push_str(" DESC");
            }
        }
        let mut extra = Vec::new();
        if self.limit.is_some() || self.offset.is_some() {
            sql.push_str(" LIMIT ?");
            // No limit: -1 for SQLite, NULL (LIMIT ALL) for PostgreSQL.
            extra.push(match self.limit {
                Some(n) => Value::Integer(n),
                None if pg => Value::Null,
                None => Value::Integer(-1),
            });
        }
        if let Some(off) = self.offset {
            sql.push_str(" OFFSET ?");
            extra.push(Value::Integer(off));
        }
        Ok(extra)
    }

    /// `SELECT "id",… FROM "T" WHERE …` and the values to bind after the query's own.
    pub(crate) fn select_sql<T: Model>(&self, pg: bool) -> Result<(String, Vec<Value>)> {
        let mut sql = String::from("SELECT ");
        push_columns(&mut sql, T::FIELDS);
        sql.push_str(" FROM ");
        push_ident(&mut sql, T::TABLE);
        let extra = self.push_tail::<T>(&mut sql, pg)?;
        Ok((sql, extra))
    }
}

/// Column index in a full row: 0 for `id`, i+1 for field i.
fn column_index<T: Model>(name: &str) -> Result<usize> {
    if name == "id" {
        Ok(0)
    } else {
        field_index::<T>(name).map(|i| i + 1)
    }
}

/// The canonical (static) spelling of a column name, or `UnknownField`.
fn column_name<T: Model>(name: &str) -> Result<&'static str> {
    match column_index::<T>(name)? {
        0 => Ok("id"),
        i => Ok(T::FIELDS[i - 1].name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::model! {
        struct P {
            name: String,
            age: i64,
        }
    }

    #[test]
    fn builds_bound_sql() {
        let q = Query::new()
            .eq("name", "x'; DROP TABLE P; --")
            .filter("age", Op::Ge, 18)
            .null("name", false)
            .order_by("age", Order::Desc)
            .order_by("id", Order::Asc)
            .limit(10)
            .offset(5);
        let (sql, extra) = q.select_sql::<P>(false).unwrap();
        assert_eq!(
            sql,
            "SELECT \"id\",\"name\",\"age\" FROM \"P\" WHERE \"name\"=? AND \"age\">=? AND \
             \"name\" IS NOT NULL ORDER BY \"age\" DESC,\"id\" LIMIT ? OFFSET ?"
        );
        assert_eq!(q.params().count(), 2);
        assert_eq!(extra, vec![Value::Integer(10), Value::Integer(5)]);
    }

    #[test]
    fn unknown_fields_are_rejected_everywhere() {
        for q in [
            Query::new().eq("nope", 1),
            Query::new().order_by("age; DROP", Order::Asc),
            Query::new().null("x", true),
        ] {
            assert!(matches!(
                q.select_sql::<P>(false),
                Err(Error::UnknownField { .. })
            ));
        }
        assert!(Query::new().select(&["bad"]).columns::<P>().is_err());
        assert_eq!(
            Query::new().select(&["age", "id"]).columns::<P>().unwrap(),
            [2, 0]
        );
    }

    #[test]
    fn raw_fragments_must_bind_values() {
        let ok = Query::new().sql("age > ? AND name LIKE ?", &[&1, &"a%"]);
        assert!(ok.select_sql::<P>(false).is_ok());
        for bad in [
            "name = 'x'",
            "age > 1; DROP TABLE P",
            "age > 1 -- x",
            "age /* */ > 1",
        ] {
            assert!(matches!(
                Query::new().sql(bad, &[]).select_sql::<P>(false),
                Err(Error::UnsafeSql(_))
            ));
        }
        assert!(Query::new()
            .sql("age > ?", &[])
            .select_sql::<P>(false)
            .is_err());
    }
}
