//! The fiber-side `Db` for each dispatch: inserts and reads from a fiber, the dispatch
//! comparison on concurrent by-one reads, and the SQLite concurrent column.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use moria_orm::{now_millis, Batch, Db, Dispatch, Mode};
use moria_runtime::Runtime;

use crate::conn_rows::{open, orm_all, orm_insert, raw_all, raw_by_one};
use crate::harness::{Bench, Insert, CONCURRENT, INSERTS};
use crate::report::{median, print_table, rate, Line};
use crate::sample::{check, sample, Sample};

/// The same work through the fiber-side `Db`, from a fiber, for one engine and dispatch.
pub(crate) fn db_rows(
    b: &mut Bench,
    rt: &Runtime,
    name: &str,
    mode: Mode,
    how: Dispatch,
) -> (Line, Line) {
    let mut cols = Vec::new();
    for kind in INSERTS {
        cols.push(b.insert_median(mode, kind, |p, rows| {
            let p = p.to_owned();
            rt.run(move || db_insert(&p, mode, how, kind, rows))
                .expect("fiber")
        }));
    }
    let ins = Line {
        label: format!("{name} (Db {how:?})"),
        cols,
    };
    let path = b.fresh(mode);
    let runs = b.args.runs;
    let rows = b.args.rows;
    let reads = rt
        .run(move || {
            let db = open_db(&path, mode, how);
            let start = now_millis();
            let mut batch = Batch::with_capacity(rows);
            (0..rows).for_each(|i| batch.add(sample(i)));
            let ids = db.batch_send(batch).expect("batch");
            let by_one: Vec<u64> = (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    for (i, id) in ids.iter().enumerate() {
                        let s: Sample = db.get(*id).expect("get");
                        check(&s, i, *id, start);
                    }
                    rate(ids.len(), t.elapsed())
                })
                .collect();
            let all: Vec<u64> = (0..runs)
                .map(|_| {
                    let ids = ids.clone();
                    let t = Instant::now();
                    db.read(move |c| Ok(orm_all(c, &ids, start))).expect("all");
                    rate(rows, t.elapsed())
                })
                .collect();
            vec![median(by_one), median(all)]
        })
        .expect("fiber");
    (
        ins,
        Line {
            label: format!("{name} (Db {how:?})"),
            cols: reads,
        },
    )
}

fn open_db(path: &Path, mode: Mode, how: Dispatch) -> Db {
    let db = Db::builder(path)
        .mode(mode)
        .dispatch(how)
        .open()
        .expect("open");
    db.ensure_schema::<Sample>().expect("schema");
    db
}

fn db_insert(
    path: &Path,
    mode: Mode,
    how: Dispatch,
    kind: Insert,
    rows: usize,
) -> (Duration, usize) {
    let db = open_db(path, mode, how);
    let start = now_millis();
    let t = Instant::now();
    let ids = insert_rows(&db, kind, rows);
    verify(&db, &ids, start);
    (t.elapsed(), ids.len())
}

/// Inserts `rows` Sample rows through `db` in mode `kind`; returns their ids.
pub(crate) fn insert_rows(db: &Db, kind: Insert, rows: usize) -> Vec<i64> {
    match kind {
        Insert::Direct => (0..rows)
            .map(|i| db.add(sample(i)).expect("add").id)
            .collect(),
        Insert::Trans => db
            .transaction(move |c| (0..rows).map(|i| c.add(&mut sample(i))).collect())
            .expect("trans"),
        Insert::Batch | Insert::BatchTrans => {
            let mut batch = Batch::with_capacity(rows);
            (0..rows).for_each(|i| batch.add(sample(i)));
            if kind == Insert::Batch {
                db.batch_send(batch).expect("batch")
            } else {
                db.transaction(move |c| c.batch_send(&mut batch))
                    .expect("batch")
            }
        }
    }
}

/// mORMot's check of an insert: the second row reads back as written.
pub(crate) fn verify(db: &Db, ids: &[i64], start: i64) {
    let one: Sample = db.get(ids[1]).expect("verify");
    check(&one, 1, ids[1], start);
}

/// By-one reads of every id from `fibers` concurrent fibers (each reads all ids, offset so
/// they do not walk in step); rows/s over all fibers.
pub(crate) fn dispatch_by_one(rt: &Runtime, db: &Db, ids: &Arc<Vec<i64>>, fibers: usize) -> u64 {
    let (db, ids) = (db.clone(), Arc::clone(ids));
    rt.run(move || {
        let t = Instant::now();
        let handles: Vec<_> = (0..fibers)
            .map(|f| {
                let (db, ids) = (db.clone(), Arc::clone(&ids));
                moria_runtime::spawn(move || {
                    let n = ids.len();
                    for k in 0..n {
                        let i = (k + f * n / fibers) % n;
                        let s: Sample = db.get(ids[i]).expect("get");
                        assert_eq!(s.id, ids[i]);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("fiber");
        }
        rate(fibers * ids.len(), t.elapsed())
    })
    .expect("fiber")
}

/// `--dispatch`: by-one reads from 1 and 8 concurrent fibers for each `Db` dispatch.
pub(crate) fn dispatch_compare(b: &mut Bench, rt: &Runtime) {
    let configs: [(&str, Mode, Dispatch, usize); 7] = [
        ("file off, Thread", Mode::Off, Dispatch::Thread, 0),
        ("file off, Offload", Mode::Off, Dispatch::Offload, 0),
        (
            "file off WAL, Thread, 2 readers",
            Mode::Off,
            Dispatch::Thread,
            2,
        ),
        (
            "file off WAL, Offload, 2 readers",
            Mode::Off,
            Dispatch::Offload,
            2,
        ),
        ("memory, Inline", Mode::Memory, Dispatch::Inline, 0),
        ("memory, Thread", Mode::Memory, Dispatch::Thread, 0),
        ("memory, Offload", Mode::Memory, Dispatch::Offload, 0),
    ];
    let rows = b.args.rows;
    let dbs: Vec<(Db, Arc<Vec<i64>>)> = configs
        .iter()
        .map(|&(_, mode, how, readers)| {
            let path = b.fresh(mode);
            let db = Db::builder(&path)
                .mode(mode)
                .wal(readers > 0)
                .readers(readers)
                .dispatch(how)
                .open()
                .expect("open");
            db.ensure_schema::<Sample>().expect("schema");
            let mut batch = Batch::with_capacity(rows);
            (0..rows).for_each(|i| batch.add(sample(i)));
            let ids = db.batch_send(batch).expect("batch");
            (db, Arc::new(ids))
        })
        .collect();
    // Runs are interleaved so a busy moment on the machine hits every configuration alike.
    let mut samples = vec![(Vec::new(), Vec::new()); configs.len()];
    for _ in 0..b.args.runs {
        for (k, (db, ids)) in dbs.iter().enumerate() {
            samples[k].0.push(dispatch_by_one(rt, db, ids, 1));
            samples[k].1.push(dispatch_by_one(rt, db, ids, 8));
        }
    }
    let lines: Vec<Line> = configs
        .iter()
        .zip(samples)
        .map(|(c, (one, eight))| Line {
            label: c.0.to_string(),
            cols: vec![median(one), median(eight)],
        })
        .collect();
    print_table(
        &format!(
            "Db by-one reads from fibers, {} workers (rows/second)",
            b.args.workers
        ),
        &["1 fiber", "8 fibers"],
        &lines,
    );
}

/// SQLite file (off) read rows with the concurrent column: `Db` per dispatch and raw rusqlite.
pub(crate) fn sqlite_concurrent_rows(b: &mut Bench, rt: &Runtime, reads: &mut Vec<Line>) {
    let rows = b.args.rows;
    let path = b.fresh(Mode::Off);
    let c = open(&path, Mode::Off);
    let mut ids = Vec::new();
    orm_insert(&c, Insert::BatchTrans, rows, &mut ids);
    let start = now_millis() - 60_000;
    let raw1 = median(
        (0..b.args.runs)
            .map(|_| rate(rows, raw_by_one(&c, &ids, start)))
            .collect(),
    );
    let rawa = median(
        (0..b.args.runs)
            .map(|_| rate(rows, raw_all(&c, &ids, start)))
            .collect(),
    );
    reads.push(Line {
        label: "SQLite file off (raw rusqlite)".into(),
        cols: vec![raw1, rawa, 0],
    });
    drop(c);
    let ids = Arc::new(ids);
    for how in [Dispatch::Thread, Dispatch::Offload] {
        let db = open_db(&path, Mode::Off, how);
        let one = median(
            (0..b.args.runs)
                .map(|_| dispatch_by_one(rt, &db, &ids, 1))
                .collect(),
        );
        let conc = median(
            (0..b.args.runs)
                .map(|_| dispatch_by_one(rt, &db, &ids, CONCURRENT))
                .collect(),
        );
        reads.push(Line {
            label: format!("SQLite file off (Db {how:?})"),
            cols: vec![one, 0, conc],
        });
    }
}
