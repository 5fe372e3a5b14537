//! The synchronous `Conn` beside raw rusqlite doing the same work: inserts per mode, reads by
//! one and all.

use std::path::Path;
use std::time::{Duration, Instant};

use moria_orm::rusqlite::{self, params};
use moria_orm::{now_millis, Batch, Conn, CreateTime, ModTime, Mode, Order, Query};

use crate::harness::{Bench, Insert, INSERTS};
use crate::report::{median, rate, Line};
use crate::sample::{check, first_name, iso_date, sample, Sample};

/// A `Conn` on a fresh database at `path` with the `Sample` table.
pub(crate) fn open(path: &Path, mode: Mode) -> Conn {
    let c = Conn::open(path, mode).expect("open");
    c.ensure_schema::<Sample>().expect("schema");
    c
}

/// ORM inserts through the synchronous `Conn`; returns (time, rows) and leaves the ids.
pub(crate) fn orm_insert(c: &Conn, ins: Insert, rows: usize, ids: &mut Vec<i64>) -> Duration {
    let start = now_millis();
    ids.clear();
    let t = Instant::now();
    match ins {
        Insert::Direct => {
            for i in 0..rows {
                ids.push(c.add(&mut sample(i)).expect("add"));
            }
        }
        Insert::Trans => c
            .transaction(|c| {
                for i in 0..rows {
                    ids.push(c.add(&mut sample(i))?);
                }
                Ok::<_, moria_orm::Error>(())
            })
            .expect("trans"),
        Insert::Batch | Insert::BatchTrans => {
            let mut b = Batch::with_capacity(rows);
            for i in 0..rows {
                b.add(sample(i));
            }
            let out = if ins == Insert::BatchTrans {
                c.transaction(|c| c.batch_send(&mut b))
            } else {
                c.batch_send(&mut b)
            };
            ids.extend(out.expect("batch"));
        }
    }
    let one: Sample = c.get(ids[1]).expect("verify");
    check(&one, 1, ids[1], start);
    t.elapsed()
}

const RAW_INSERT: &str = "INSERT INTO Sample(first_name,last_name,amount,birth_date,last_change,created_at) VALUES(?,?,?,?,?,?)";
const RAW_SELECT: &str = "SELECT id,first_name,last_name,amount,birth_date,last_change,created_at FROM Sample WHERE id=?";

fn raw_row(stmt: &mut rusqlite::CachedStatement<'_>, i: usize) -> rusqlite::Result<usize> {
    let now = now_millis();
    stmt.execute(params![
        first_name(i),
        (i + 1).to_string(),
        (i + 1) as f64 * 0.01,
        iso_date(i as i64 + 1),
        now,
        now
    ])
}

/// Raw rusqlite: one cached single-row INSERT per row, autocommit (Direct) or in one
/// transaction (every other column: raw rusqlite has no batch).
fn raw_insert(c: &Conn, ins: Insert, rows: usize) -> Duration {
    let db = c.sqlite().expect("a SQLite connection");
    let t = Instant::now();
    if ins == Insert::Direct {
        for i in 0..rows {
            raw_row(&mut db.prepare_cached(RAW_INSERT).expect("prepare"), i).expect("insert");
        }
    } else {
        db.execute_batch("BEGIN IMMEDIATE").expect("begin");
        {
            let mut stmt = db.prepare_cached(RAW_INSERT).expect("prepare");
            for i in 0..rows {
                raw_row(&mut stmt, i).expect("insert");
            }
        }
        db.execute_batch("COMMIT").expect("commit");
    }
    t.elapsed()
}

/// Raw rusqlite: reads every id one at a time, checking each row.
pub(crate) fn raw_by_one(c: &Conn, ids: &[i64], start: i64) -> Duration {
    let db = c.sqlite().expect("a SQLite connection");
    let t = Instant::now();
    for (i, id) in ids.iter().enumerate() {
        let mut stmt = db.prepare_cached(RAW_SELECT).expect("prepare");
        let s = stmt
            .query_row([id], |r| {
                Ok(Sample {
                    id: r.get(0)?,
                    first_name: r.get(1)?,
                    last_name: r.get(2)?,
                    amount: r.get(3)?,
                    birth_date: r.get(4)?,
                    last_change: ModTime(r.get(5)?),
                    created_at: CreateTime(r.get(6)?),
                })
            })
            .expect("row");
        check(&s, i, *id, start);
    }
    t.elapsed()
}

/// Raw rusqlite: reads every row in one statement, checking each.
pub(crate) fn raw_all(c: &Conn, ids: &[i64], start: i64) -> Duration {
    let db = c.sqlite().expect("a SQLite connection");
    let t = Instant::now();
    let mut stmt = db
        .prepare_cached("SELECT id,first_name,last_name,amount,birth_date,last_change,created_at FROM Sample ORDER BY id")
        .expect("prepare");
    let mut rows = stmt.query([]).expect("query");
    let mut i = 0;
    while let Some(r) = rows.next().expect("next") {
        let s = Sample {
            id: r.get(0).expect("id"),
            first_name: r.get(1).expect("first"),
            last_name: r.get(2).expect("last"),
            amount: r.get(3).expect("amount"),
            birth_date: r.get(4).expect("birth"),
            last_change: ModTime(r.get(5).expect("change")),
            created_at: CreateTime(r.get(6).expect("created")),
        };
        check(&s, i, ids[i], start);
        i += 1;
    }
    assert_eq!(i, ids.len());
    t.elapsed()
}

fn orm_by_one(c: &Conn, ids: &[i64], start: i64) -> Duration {
    let mut s = Sample::default();
    let t = Instant::now();
    for (i, id) in ids.iter().enumerate() {
        c.get_into(*id, &mut s).expect("get");
        check(&s, i, *id, start);
    }
    t.elapsed()
}

/// The ORM: every row in one `list`, checking each.
pub(crate) fn orm_all(c: &Conn, ids: &[i64], start: i64) -> Duration {
    let t = Instant::now();
    let mut sel = c
        .select::<Sample>(&Query::new().order_by("id", Order::Asc))
        .expect("select");
    let mut cur = sel.rows();
    let mut s = Sample::default();
    let mut i = 0;
    while cur.fill(&mut s).expect("fill") {
        check(&s, i, ids[i], start);
        i += 1;
    }
    assert_eq!(i, ids.len());
    t.elapsed()
}

/// Inserts and reads on the synchronous `Conn` and with raw rusqlite, for one engine. ORM and
/// raw runs alternate, so a busy moment on the shared machine hits both alike.
pub(crate) fn engine_rows(
    b: &mut Bench,
    name: &str,
    mode: Mode,
    ins: &mut Vec<Line>,
    reads: &mut Vec<Line>,
) {
    let mut orm = Vec::new();
    let mut raw = Vec::new();
    for kind in INSERTS {
        let rows = b.rows_for(mode, kind);
        let (mut o, mut r) = (Vec::new(), Vec::new());
        for _ in 0..b.args.runs {
            let c = open(&b.fresh(mode), mode);
            let mut ids = Vec::new();
            o.push(rate(rows, orm_insert(&c, kind, rows, &mut ids)));
            assert_eq!(ids.len(), rows);
            let c = open(&b.fresh(mode), mode);
            r.push(rate(rows, raw_insert(&c, kind, rows)));
        }
        orm.push(median(o));
        raw.push(median(r));
    }
    ins.push(Line {
        label: format!("{name} (orm)"),
        cols: orm,
    });
    ins.push(Line {
        label: format!("{name} (raw rusqlite)"),
        cols: raw,
    });

    // Reads run against the rows of a Batch Trans pass, as mORMot does.
    let path = b.fresh(mode);
    let c = open(&path, mode);
    let start = now_millis();
    let mut ids = Vec::new();
    orm_insert(&c, Insert::BatchTrans, b.args.rows, &mut ids);
    let n = ids.len();
    let mut samples = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..b.args.runs {
        samples[0].push(rate(n, orm_by_one(&c, &ids, start)));
        samples[1].push(rate(n, raw_by_one(&c, &ids, start)));
        samples[2].push(rate(n, orm_all(&c, &ids, start)));
        samples[3].push(rate(n, raw_all(&c, &ids, start)));
    }
    let [ob, rb, oa, ra] = samples.map(median);
    reads.push(Line {
        label: format!("{name} (orm)"),
        cols: vec![ob, oa],
    });
    reads.push(Line {
        label: format!("{name} (raw rusqlite)"),
        cols: vec![rb, ra],
    });
}
