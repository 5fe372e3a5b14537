//! SQL text for a model, built once per model type and kept for the life of the process.
//!
//! Identifiers are always written double-quoted with embedded quotes doubled, so even a table
//! name that skipped [`check_ident`] cannot break out of its quotes. Values never appear here:
//! every value is a `?` bound later.

use crate::error::{Error, Result};
use crate::field::FieldDef;

/// Rejects anything but `[A-Za-z_][A-Za-z0-9_]*`, the names the schema accepts.
pub(crate) fn check_ident(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let ok = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidName(name.to_owned()))
    }
}

/// Appends `name` as a quoted SQL identifier.
pub(crate) fn push_ident(sql: &mut String, name: &str) {
    sql.push('"');
    for c in name.chars() {
        if c == '"' {
            sql.push('"');
        }
        sql.push(c);
    }
    sql.push('"');
}

/// Appends `"id","a","b"`: the id column then every field.
pub(crate) fn push_columns(sql: &mut String, fields: &[FieldDef]) {
    push_ident(sql, "id");
    for f in fields {
        sql.push(',');
        push_ident(sql, f.name);
    }
}

/// Appends `(?,?,…)` with `n` placeholders.
fn push_placeholders(sql: &mut String, n: usize) {
    sql.push('(');
    for i in 0..n {
        if i > 0 {
            sql.push(',');
        }
        sql.push('?');
    }
    sql.push(')');
}

/// The fixed statements of one model.
#[doc(hidden)]
#[derive(Debug)]
pub struct SqlTexts {
    pub(crate) select_by_id: String,
    pub(crate) insert: String,
    pub(crate) insert_returning: String,
    pub(crate) insert_with_id: String,
    pub(crate) update: String,
    pub(crate) delete: String,
    pub(crate) exists: String,
    pub(crate) max_id: String,
}

impl SqlTexts {
    /// Builds every statement for `table` with `fields`.
    pub fn new(table: &str, fields: &[FieldDef]) -> Self {
        let mut t = String::new();
        push_ident(&mut t, table);

        let mut cols = String::new();
        push_columns(&mut cols, fields);
        let select_by_id = format!("SELECT {cols} FROM {t} WHERE \"id\"=?");

        let mut insert = format!("INSERT INTO {t}(");
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                insert.push(',');
            }
            push_ident(&mut insert, f.name);
        }
        insert.push_str(") VALUES");
        push_placeholders(&mut insert, fields.len());
        if fields.is_empty() {
            insert = format!("INSERT INTO {t} DEFAULT VALUES");
        }

        let mut insert_with_id = format!("INSERT INTO {t}({cols}) VALUES");
        push_placeholders(&mut insert_with_id, fields.len() + 1);

        let mut update = format!("UPDATE {t} SET ");
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                update.push(',');
            }
            push_ident(&mut update, f.name);
            update.push_str("=?");
        }
        update.push_str(" WHERE \"id\"=?");
        if fields.is_empty() {
            update = format!("UPDATE {t} SET \"id\"=\"id\" WHERE \"id\"=?");
        }

        SqlTexts {
            select_by_id,
            insert_returning: format!("{insert} RETURNING \"id\""),
            insert,
            insert_with_id,
            update,
            delete: format!("DELETE FROM {t} WHERE \"id\"=?"),
            exists: format!("SELECT 1 FROM {t} WHERE \"id\"=?"),
            max_id: format!("SELECT max(\"id\") FROM {t}"),
        }
    }
}

/// `INSERT INTO t(…) VALUES (?,…),(?,…)…` for `rows` rows, ids left to the database.
pub(crate) fn multi_insert(table: &str, fields: &[FieldDef], rows: usize) -> String {
    let mut sql = String::with_capacity(32 + 16 * fields.len() + rows * (2 * fields.len() + 1));
    sql.push_str("INSERT INTO ");
    push_ident(&mut sql, table);
    if fields.is_empty() {
        sql.push_str(" DEFAULT VALUES");
        return sql;
    }
    sql.push('(');
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            sql.push(',');
        }
        push_ident(&mut sql, f.name);
    }
    sql.push_str(") VALUES");
    for r in 0..rows {
        if r > 0 {
            sql.push(',');
        }
        push_placeholders(&mut sql, fields.len());
    }
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: &[FieldDef] = &[FieldDef::of::<String>("name"), FieldDef::of::<i64>("n")];

    #[test]
    fn identifiers_are_checked() {
        assert!(check_ident("Sample_2").is_ok());
        assert!(check_ident("_x").is_ok());
        for bad in ["", "2x", "a b", "a\"b", "a;b", "é"] {
            assert!(check_ident(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn quotes_inside_identifiers_are_doubled() {
        let mut s = String::new();
        push_ident(&mut s, "a\"; DROP TABLE x; --");
        assert_eq!(s, "\"a\"\"; DROP TABLE x; --\"");
    }

    #[test]
    fn statements_have_the_expected_shape() {
        let t = SqlTexts::new("T", FIELDS);
        assert_eq!(
            t.select_by_id,
            "SELECT \"id\",\"name\",\"n\" FROM \"T\" WHERE \"id\"=?"
        );
        assert_eq!(t.insert, "INSERT INTO \"T\"(\"name\",\"n\") VALUES(?,?)");
        assert_eq!(
            t.update,
            "UPDATE \"T\" SET \"name\"=?,\"n\"=? WHERE \"id\"=?"
        );
        assert_eq!(
            multi_insert("T", FIELDS, 2),
            "INSERT INTO \"T\"(\"name\",\"n\") VALUES(?,?),(?,?)"
        );
    }
}
