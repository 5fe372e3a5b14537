//! Batch statement shapes in raw rusqlite: rows per INSERT statement, ids bound or not.

use std::path::Path;
use std::time::{Duration, Instant};

use moria_orm::{now_millis, Mode};

use crate::conn_rows::open;
use crate::harness::Args;
use crate::report::{median, print_table, rate, Line};
use crate::sample::{sample, Sample};

/// Raw rusqlite: `rows` Sample rows in one transaction, `per_stmt` rows per INSERT statement
/// (1 = the cached single-row statement), ids bound explicitly or left to SQLite.
fn shape_insert(rows: usize, per_stmt: usize, bind_ids: bool) -> Duration {
    let c = open(Path::new(""), Mode::Memory);
    let db = c.sqlite().expect("a SQLite connection");
    let cols = if bind_ids {
        "id,first_name,last_name,amount,birth_date,last_change,created_at"
    } else {
        "first_name,last_name,amount,birth_date,last_change,created_at"
    };
    let one = if bind_ids {
        "(?,?,?,?,?,?,?)"
    } else {
        "(?,?,?,?,?,?)"
    };
    let samples: Vec<Sample> = (0..rows).map(sample).collect();
    let sql = |n: usize| {
        format!(
            "INSERT INTO Sample({cols}) VALUES{}",
            vec![one; n].join(",")
        )
    };
    let now = now_millis();
    let t = Instant::now();
    db.execute_batch("BEGIN IMMEDIATE").expect("begin");
    let mut full = db.prepare(&sql(per_stmt)).expect("prepare");
    for (k, chunk) in samples.chunks(per_stmt).enumerate() {
        let mut rest;
        let stmt = if chunk.len() == per_stmt {
            &mut full
        } else {
            rest = db.prepare(&sql(chunk.len())).expect("prepare");
            &mut rest
        };
        let mut p = 1;
        for (j, s) in chunk.iter().enumerate() {
            if bind_ids {
                stmt.raw_bind_parameter(p, (k * per_stmt + j + 1) as i64)
                    .expect("bind");
                p += 1;
            }
            stmt.raw_bind_parameter(p, &s.first_name).expect("bind");
            stmt.raw_bind_parameter(p + 1, &s.last_name).expect("bind");
            stmt.raw_bind_parameter(p + 2, s.amount).expect("bind");
            stmt.raw_bind_parameter(p + 3, &s.birth_date).expect("bind");
            stmt.raw_bind_parameter(p + 4, now).expect("bind");
            stmt.raw_bind_parameter(p + 5, now).expect("bind");
            p += 6;
        }
        stmt.raw_execute().expect("insert");
    }
    drop(full);
    db.execute_batch("COMMIT").expect("commit");
    t.elapsed()
}

/// `--shapes`: batch statement shapes compared in memory.
pub(crate) fn shapes(args: &Args) {
    let mut lines = Vec::new();
    for bind_ids in [false, true] {
        let mut cols = Vec::new();
        for params in [6, 128, 256, 512, 1024, 4096] {
            let per_stmt = (params / if bind_ids { 7 } else { 6 }).max(1);
            let runs = (0..args.runs)
                .map(|_| rate(args.rows, shape_insert(args.rows, per_stmt, bind_ids)));
            cols.push(median(runs.collect()));
        }
        let label = if bind_ids {
            "ids bound (mORMot)"
        } else {
            "ids left to SQLite"
        };
        lines.push(Line {
            label: label.into(),
            cols,
        });
    }
    print_table(
        "Batch statement shapes, raw rusqlite in memory, one transaction (rows/second)",
        &[
            "1 row",
            "128 params",
            "256 params",
            "512 params",
            "1024 params",
            "4096 params",
        ],
        &lines,
    );
}
