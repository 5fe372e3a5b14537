//! Schema creation and evolution: create missing tables, add missing columns and indexes.
//!
//! Nothing is ever dropped or renamed. A column added to a table that has rows gets the type's
//! zero value (`0`, `''`, …) or NULL when the field is an `Option`. A new `unique` field on a
//! table with several rows must therefore be an `Option` (NULLs do not collide).

use std::collections::HashSet;

use crate::conn::Conn;
use crate::error::Result;
use crate::field::FieldDef;
use crate::model::Model;
use crate::sql::{check_ident, push_ident};

/// Column definition as used by both CREATE TABLE and ALTER TABLE ADD COLUMN.
fn push_column(sql: &mut String, f: &FieldDef) {
    push_ident(sql, f.name);
    sql.push(' ');
    sql.push_str(f.ty.sql());
    if !f.nullable {
        sql.push_str(" NOT NULL DEFAULT ");
        sql.push_str(f.ty.zero());
    }
}

fn create_table_sql(table: &str, fields: &[FieldDef]) -> String {
    let mut sql = String::from("CREATE TABLE ");
    push_ident(&mut sql, table);
    sql.push_str("(\"id\" INTEGER PRIMARY KEY");
    for f in fields {
        sql.push(',');
        push_column(&mut sql, f);
    }
    sql.push(')');
    sql
}

fn index_sql(table: &str, f: &FieldDef) -> Option<String> {
    let kind = match (f.unique, f.indexed) {
        (true, _) => "UNIQUE INDEX",
        (false, true) => "INDEX",
        (false, false) => return None,
    };
    let mut sql = format!("CREATE {kind} IF NOT EXISTS ");
    push_ident(&mut sql, &format!("{table}_{}", f.name));
    sql.push_str(" ON ");
    push_ident(&mut sql, table);
    sql.push('(');
    push_ident(&mut sql, f.name);
    sql.push(')');
    Some(sql)
}

impl Conn {
    /// Creates `T`'s table, or adds the columns and indexes it lacks. Idempotent.
    pub fn ensure_schema<T: Model>(&self) -> Result<()> {
        check_ident(T::TABLE)?;
        for f in T::FIELDS {
            check_ident(f.name)?;
        }
        self.transaction(|c| {
            let existing = c.columns(T::TABLE)?;
            if existing.is_empty() {
                log::info!("creating table {}", T::TABLE);
                c.db.execute_batch(&create_table_sql(T::TABLE, T::FIELDS))?;
            } else {
                for f in T::FIELDS.iter().filter(|f| !existing.contains(f.name)) {
                    log::info!("adding column {}.{}", T::TABLE, f.name);
                    let mut sql = String::from("ALTER TABLE ");
                    push_ident(&mut sql, T::TABLE);
                    sql.push_str(" ADD COLUMN ");
                    push_column(&mut sql, f);
                    c.db.execute_batch(&sql)?;
                }
            }
            for sql in T::FIELDS.iter().filter_map(|f| index_sql(T::TABLE, f)) {
                c.db.execute_batch(&sql)?;
            }
            Ok(())
        })
    }

    /// Names of the table's columns; empty when the table does not exist.
    fn columns(&self, table: &str) -> Result<HashSet<String>> {
        let mut stmt = self.db.prepare("SELECT name FROM pragma_table_info(?1)")?;
        let names = stmt
            .query_map([table], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<HashSet<_>>>()?;
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_and_index_statements() {
        let fields = [
            FieldDef::of::<String>("name").unique(),
            FieldDef::of::<Option<i64>>("n").index(),
        ];
        assert_eq!(
            create_table_sql("T", &fields),
            "CREATE TABLE \"T\"(\"id\" INTEGER PRIMARY KEY,\"name\" TEXT NOT NULL DEFAULT '',\"n\" INTEGER)"
        );
        assert_eq!(
            index_sql("T", &fields[0]).unwrap(),
            "CREATE UNIQUE INDEX IF NOT EXISTS \"T_name\" ON \"T\"(\"name\")"
        );
        assert_eq!(
            index_sql("T", &fields[1]).unwrap(),
            "CREATE INDEX IF NOT EXISTS \"T_n\" ON \"T\"(\"n\")"
        );
    }
}
