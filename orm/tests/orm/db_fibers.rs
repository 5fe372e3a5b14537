//! `Db` from fibers: 100 fibers reading and writing on 2 workers, for every dispatch, with and
//! without WAL readers; a panicking call; a SQLite call that must not hold its worker.

use std::sync::mpsc;
use std::time::Duration;

use crate::common::{self, runtime, Person, TempDir};
use moria_orm::{Batch, Db, Dispatch, Error, Mode, Query};
use moria_runtime::spawn;

const FIBERS: usize = 100;
const ROWS_PER_FIBER: i64 = 5;

/// Each fiber adds its rows, reads them back, updates, counts and deletes; all checked.
fn hammer(db: Db) {
    db.ensure_schema::<Person>().unwrap();
    let handles: Vec<_> = (0..FIBERS)
        .map(|f| {
            let db = db.clone();
            spawn(move || {
                let city = format!("city{f}");
                let mut ids = Vec::new();
                for k in 0..ROWS_PER_FIBER {
                    let p = db.add(Person::new(&format!("f{f}-{k}"), &city, k)).unwrap();
                    ids.push(p.id);
                }
                for (k, id) in ids.iter().enumerate() {
                    let mut p: Person = db.get(*id).unwrap();
                    assert_eq!(p.name, format!("f{f}-{k}"));
                    p.age += 100;
                    db.update(p).unwrap();
                }
                let mine = db
                    .list::<Person>(Query::new().eq("city", city.as_str()))
                    .unwrap();
                assert_eq!(mine.len(), ROWS_PER_FIBER as usize);
                assert!(mine.iter().all(|p| p.age >= 100));
                db.delete::<Person>(ids[0]).unwrap();
                assert!(!db.exists::<Person>(ids[0]).unwrap());
                db.count::<Person>(Query::new().eq("city", city.as_str()))
                    .unwrap()
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), ROWS_PER_FIBER - 1);
    }
    let total = db.count::<Person>(Query::new()).unwrap();
    assert_eq!(total, FIBERS as i64 * (ROWS_PER_FIBER - 1));
}

#[test]
fn hundred_fibers_on_each_dispatch() {
    let dir = TempDir::new("fibers");
    let rt = runtime();
    let cases = [
        ("thread", Dispatch::Thread, Mode::Off, false, 0),
        ("offload", Dispatch::Offload, Mode::Off, false, 0),
        ("thread-wal", Dispatch::Thread, Mode::Off, true, 3),
        ("offload-wal", Dispatch::Offload, Mode::Full, true, 3),
        ("exclusive", Dispatch::Thread, Mode::OffExclusive, false, 0),
    ];
    for (name, how, mode, wal, readers) in cases {
        let path = dir.file(&format!("{name}.db"));
        rt.run(move || {
            let db = Db::builder(&path)
                .mode(mode)
                .wal(wal)
                .readers(readers)
                .dispatch(how)
                .open()
                .unwrap();
            hammer(db);
        })
        .unwrap();
    }
    rt.run(|| hammer(Db::open(":memory:").unwrap())).unwrap();
}

/// The same hammer on PostgreSQL: 100 fibers on 2 workers sharing a pool of 8 connections.
#[test]
fn hundred_fibers_on_postgres_with_a_pool_of_8() {
    let url = common::pg_url();
    runtime()
        .run(move || hammer(Db::builder(url).pool_size(8).open().unwrap()))
        .unwrap();
}

#[test]
fn a_panicking_call_rolls_back_and_the_db_lives_on_postgres() {
    let url = common::pg_url();
    runtime()
        .run(move || panicking_call(Db::builder(url).pool_size(2).open().unwrap()))
        .unwrap();
}

fn panicking_call(db: Db) {
    db.ensure_schema::<Person>().unwrap();
    let out = db.transaction(|c| -> Result<(), Error> {
        c.add(&mut Person::new("doomed", "x", 1))?;
        panic!("inside the transaction");
    });
    assert!(
        matches!(&out, Err(Error::Panicked(m)) if m.contains("inside the transaction")),
        "{out:?}"
    );
    assert_eq!(db.count::<Person>(Query::new()).unwrap(), 0);
    db.add(Person::new("alive", "x", 1)).unwrap();
    let mut b = Batch::new();
    b.add(Person::new("alive", "y", 2));
    assert!(matches!(db.batch_send(b), Err(Error::Conflict { .. })));
    assert_eq!(db.count::<Person>(Query::new()).unwrap(), 1);
}

#[test]
fn a_panicking_call_rolls_back_and_the_db_lives_on() {
    let dir = TempDir::new("panic");
    let rt = runtime();
    for how in [Dispatch::Thread, Dispatch::Offload] {
        let path = dir.file(&format!("{how:?}.db"));
        rt.run(move || panicking_call(Db::builder(&path).dispatch(how).open().unwrap()))
            .unwrap();
    }
}

/// Two fibers (one per worker) start SQLite calls that wait for a signal sent by a third fiber.
/// Had the calls run on the workers, the third fiber could not run: each call would time out
/// and return an error instead of the signal.
#[test]
fn a_waiting_sqlite_call_does_not_hold_its_worker() {
    let dir = TempDir::new("worker");
    let rt = runtime();
    for how in [Dispatch::Thread, Dispatch::Offload] {
        let path = dir.file(&format!("{how:?}.db"));
        rt.run(move || {
            let db = Db::builder(&path).dispatch(how).open().unwrap();
            let (tx, rx) = mpsc::channel::<u32>();
            let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
            let waiters: Vec<_> = (0..2)
                .map(|_| {
                    let (db, rx) = (db.clone(), rx.clone());
                    spawn(move || {
                        db.run(move |_| {
                            let rx = rx.lock().unwrap();
                            rx.recv_timeout(Duration::from_secs(20))
                                .map_err(|e| Error::Config(format!("no signal: {e}")))
                        })
                    })
                })
                .collect();
            let signaller = spawn(move || {
                tx.send(1).unwrap();
                tx.send(2).unwrap();
            });
            signaller.join().unwrap();
            let mut got: Vec<u32> = waiters
                .into_iter()
                .map(|w| w.join().unwrap().unwrap())
                .collect();
            got.sort_unstable();
            assert_eq!(got, [1, 2]);
        })
        .unwrap();
    }
}

#[test]
fn inconsistent_options_are_refused() {
    let dir = TempDir::new("opts");
    let path = dir.file("x.db");
    let refused = [
        Db::builder(&path).dispatch(Dispatch::Inline).open(),
        Db::builder(&path).readers(2).open(),
        Db::builder(&path)
            .wal(true)
            .mode(Mode::OffExclusive)
            .readers(2)
            .open(),
        Db::builder(&path).wal(true).readers(1_000).open(),
        Db::builder(&path).mode(Mode::Memory).wal(true).open(),
        Db::builder(&path).batch_params(0).open(),
    ];
    for r in refused {
        assert!(matches!(r, Err(Error::Config(_))), "{r:?}");
    }
    assert!(Db::builder(dir.path().join("no/such/dir/x.db"))
        .open()
        .is_err());
}
