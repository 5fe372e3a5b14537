//! A `Db` call made from inside a closure running on the same database returns
//! `Error::Reentrant` at once, on every lane: thread, offload, inline (memory) and PostgreSQL.
//! Before the guard, the thread and inline lanes deadlocked (the one writer waits for itself),
//! the offload lane parked a pool thread forever, and PostgreSQL took a second connection
//! outside the caller's transaction (or waited the pool's whole acquire timeout).
//! A call on another database from inside the closure still works.

use std::sync::mpsc;
use std::time::Duration;

use crate::common::{self, runtime, Person, TempDir};
use moria_orm::{Db, Dispatch, Error, Mode, Query};
use moria_runtime::spawn;

/// Long enough for any healthy run; only a deadlock reaches it.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// Runs `body` in a fiber and fails (instead of hanging) if it deadlocks.
fn in_fiber(name: &str, body: impl FnOnce() + Send + 'static) {
    let _rt = runtime();
    let (tx, rx) = mpsc::channel();
    let fiber = spawn(move || {
        body();
        let _ = tx.send(());
    });
    match rx.recv_timeout(HANG_GUARD) {
        Ok(()) => fiber.join().unwrap(),
        Err(_) => panic!("{name}: the nested call deadlocked"),
    }
}

/// Every kind of nested call, from `run`, `read` and `transaction` closures.
fn nested_calls_are_refused(db: Db) {
    db.ensure_schema::<Person>().unwrap();
    db.add(Person::new("a", "x", 1)).unwrap();
    let inner = db.clone();
    let out = db.run(move |_| inner.count::<Person>(Query::new()));
    assert!(matches!(out, Err(Error::Reentrant)), "run → read: {out:?}");
    let inner = db.clone();
    let out = db.read(move |_| inner.add(Person::new("b", "x", 2)).map(|_| ()));
    assert!(matches!(out, Err(Error::Reentrant)), "read → add: {out:?}");
    let inner = db.clone();
    let out = db.transaction(move |c| {
        c.add(&mut Person::new("c", "x", 3))?;
        inner.get::<Person>(1).map(|_| ())
    });
    assert!(
        matches!(out, Err(Error::Reentrant)),
        "transaction → get: {out:?}"
    );
    assert_eq!(
        db.count::<Person>(Query::new()).unwrap(),
        1,
        "the refused transaction rolled back"
    );
}

#[test]
fn a_nested_call_on_each_sqlite_lane_is_refused() {
    let dir = TempDir::new("reentry");
    let cases = [
        ("thread", Dispatch::Thread, false, 0),
        ("thread-readers", Dispatch::Thread, true, 2),
        ("offload", Dispatch::Offload, false, 0),
        ("offload-readers", Dispatch::Offload, true, 2),
    ];
    for (name, how, wal, readers) in cases {
        let path = dir.file(&format!("{name}.db"));
        in_fiber(name, move || {
            let db = Db::builder(&path)
                .dispatch(how)
                .mode(Mode::Off)
                .wal(wal)
                .readers(readers)
                .open()
                .unwrap();
            nested_calls_are_refused(db);
        });
    }
    in_fiber("inline", || {
        nested_calls_are_refused(Db::open(":memory:").unwrap())
    });
}

#[test]
fn a_nested_call_on_postgres_is_refused() {
    let url = common::pg_url();
    in_fiber("postgres", move || {
        let db = Db::builder(url)
            .pool_size(1)
            .acquire_timeout(HANG_GUARD * 2)
            .open()
            .unwrap();
        nested_calls_are_refused(db);
    });
}

/// A closure on one database may call another; a call back into the first, made from the
/// second's closure (on another connection thread), is refused too.
#[test]
fn calls_across_databases_work_and_a_cycle_is_refused() {
    let dir = TempDir::new("reentry-two");
    let (a_path, b_path) = (dir.file("a.db"), dir.file("b.db"));
    in_fiber("two databases", move || {
        let a = Db::open(&a_path).unwrap();
        let b = Db::open(&b_path).unwrap();
        a.ensure_schema::<Person>().unwrap();
        b.ensure_schema::<Person>().unwrap();
        let b2 = b.clone();
        let n = a
            .run(move |_| b2.add(Person::new("in b", "x", 1)).map(|p| p.id))
            .unwrap();
        assert_eq!(n, 1);
        let (a2, b2) = (a.clone(), b.clone());
        let out = a.run(move |_| b2.run(move |_| a2.count::<Person>(Query::new())));
        assert!(matches!(out, Err(Error::Reentrant)), "a → b → a: {out:?}");
    });
}
