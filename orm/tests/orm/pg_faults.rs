//! Faults on PostgreSQL: the server killed and restarted mid-load, `pg_terminate_backend` on
//! a pooled connection, pool exhaustion (a distinct error, 503 over REST), a connection
//! returned inside a failed transaction, statement timeouts through `Db`, and 200 fibers on
//! 2 workers sharing a pool of 8 without a lost or duplicated write.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{self, runtime, Person};
use moria_orm::pg::{self, Client, PoolOptions, TestServer, TxStatus};
use moria_orm::{Batch, Db, Error, Query};
use moria_runtime::{sleep, spawn};

/// Runs `f` in a fiber with the URL of a fresh schema on the shared test server.
fn on_fresh_schema(f: impl FnOnce(String) + Send + 'static) {
    let url = common::pg_url();
    runtime().run(move || f(url)).unwrap();
}

/// A pool of at most one exclusive connection to `url`.
fn pool_of_one(url: &str) -> pg::Pool {
    pg::Pool::new(
        pg::Config::parse(url).unwrap(),
        PoolOptions {
            max_size: 1,
            ..PoolOptions::default()
        },
    )
    .unwrap()
}

#[test]
fn server_killed_and_restarted_mid_load() {
    let rt = runtime();
    // A server of its own: the other tests in this binary keep theirs running.
    let srv = Arc::new(TestServer::start().unwrap_or_else(|e| panic!("{e}")));
    let url = srv.url();
    rt.run(move || {
        // The throwaway server acknowledges commits before their WAL is written
        // (synchronous_commit=off, for speed): a crash could then lose an acknowledged insert
        // and hand its id to the next one, and the read-back below would find another row. Every
        // session of this test's role commits durably instead (a role setting overrides the
        // server's command line for new sessions; the pool opens its connections after this).
        let mut admin = Client::connect(&url).unwrap();
        admin
            .batch_execute("ALTER ROLE CURRENT_USER SET synchronous_commit = on")
            .unwrap();
        admin.close().unwrap();
        let db = Db::builder(&url)
            .pool_size(8)
            .acquire_timeout(Duration::from_secs(5))
            .open()
            .unwrap();
        db.ensure_schema::<Person>().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let restarted = Arc::new(AtomicBool::new(false));
        let (ok_after, errors) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let workers: Vec<_> = (0..16)
            .map(|f| {
                let (db, stop, restarted) = (db.clone(), stop.clone(), restarted.clone());
                let (ok_after, errors) = (ok_after.clone(), errors.clone());
                spawn(move || {
                    let mut k = 0;
                    while !stop.load(Ordering::Relaxed) {
                        k += 1;
                        let t = Instant::now();
                        let out = db.add(Person::new(&format!("f{f}-{k}"), "c", k));
                        assert!(t.elapsed() < Duration::from_secs(20), "a call hung");
                        match out {
                            // Durable commits: the read-back may fail around the crash, but
                            // never returns a wrong row.
                            Ok(p) => match db.get::<Person>(p.id) {
                                Ok(back) => {
                                    assert_eq!(back.age, k);
                                    if restarted.load(Ordering::Relaxed) {
                                        ok_after.fetch_add(1, Ordering::Relaxed);
                                    }
                                }
                                Err(_) => {
                                    errors.fetch_add(1, Ordering::Relaxed);
                                }
                            },
                            Err(_) => {
                                errors.fetch_add(1, Ordering::Relaxed);
                                sleep(Duration::from_millis(20));
                            }
                        }
                    }
                })
            })
            .collect();
        sleep(Duration::from_millis(500));
        let s = srv.clone();
        moria_runtime::blocking(move || s.crash_and_restart())
            .unwrap()
            .unwrap();
        restarted.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + Duration::from_secs(30);
        while ok_after.load(Ordering::Relaxed) < 200 && Instant::now() < deadline {
            sleep(Duration::from_millis(50));
        }
        stop.store(true, Ordering::Relaxed);
        for w in workers {
            w.join().unwrap();
        }
        assert!(
            ok_after.load(Ordering::Relaxed) >= 200,
            "the pool recovered: {} calls succeeded after the restart ({} errors)",
            ok_after.load(Ordering::Relaxed),
            errors.load(Ordering::Relaxed)
        );
        assert!(
            errors.load(Ordering::Relaxed) > 0,
            "in-flight calls saw the crash"
        );
    })
    .unwrap();
}

#[test]
fn pg_terminate_backend_on_a_pooled_connection() {
    on_fresh_schema(|url| {
        let admin_url = common::pg_server().url();
        let db = Db::builder(&url).pool_size(1).open().unwrap();
        db.ensure_schema::<Person>().unwrap();
        let pid = |db: &Db| db.run(|c| Ok(c.pg().unwrap().backend_pid())).unwrap();
        let first = pid(&db);
        let mut admin = Client::connect(&admin_url).unwrap();
        let killed: bool = admin
            .query_one("SELECT pg_terminate_backend($1)", &[&first])
            .unwrap()
            .get(0)
            .unwrap();
        assert!(killed);
        // Wait until the server has closed it, then use the pool: the dead connection
        // is noticed at checkout and replaced.
        let t = Instant::now();
        while admin
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
                &[&first],
            )
            .unwrap()
            .get::<i64>(0)
            .unwrap()
            > 0
            && t.elapsed() < Duration::from_secs(10)
        {
            sleep(Duration::from_millis(10));
        }
        db.add(Person::new("after", "x", 1)).unwrap();
        assert_ne!(pid(&db), first);
    });
}

#[test]
fn pool_exhaustion_is_a_distinct_error_and_rest_answers_503() {
    on_fresh_schema(|url| {
        let pool = pool_of_one(&url);
        let held = pool.acquire().unwrap();
        let t = Instant::now();
        let e = pool
            .acquire_timeout(Duration::from_millis(100))
            .unwrap_err();
        assert!(matches!(e, pg::Error::PoolTimeout(_)), "{e}");
        assert!(t.elapsed() >= Duration::from_millis(90));
        drop(held);
        assert!(pool.acquire_timeout(Duration::from_millis(100)).is_ok());

        let db = Db::builder(&url)
            .pool_size(1)
            .acquire_timeout(Duration::from_millis(100))
            .open()
            .unwrap();
        db.ensure_schema::<Person>().unwrap();
        let busy = db.clone();
        let (inside_tx, inside) = moria_runtime::sync::channel::<()>();
        let (release_tx, release) = moria_runtime::sync::channel::<()>();
        let holder = spawn(move || {
            busy.transaction(move |_| {
                let _ = inside_tx.send(());
                let _ = release.recv();
                Ok(())
            })
        });
        inside.recv().unwrap();
        // Single statements use the shared connections, outside the exhausted pool.
        assert_eq!(db.count::<Person>(Query::new()).unwrap(), 0);
        let e = db
            .transaction(|c| c.count::<Person>(&Query::new()))
            .unwrap_err();
        assert!(
            matches!(e, Error::Postgres(pg::Error::PoolTimeout(_))),
            "{e}"
        );
        assert_eq!(moria_orm::rest::status_of(&e), 503);
        release_tx.send(()).unwrap();
        holder.join().unwrap().unwrap();
        assert_eq!(db.count::<Person>(Query::new()).unwrap(), 0);
    });
}

#[test]
fn a_connection_returned_inside_a_failed_transaction_is_never_handed_out_dirty() {
    on_fresh_schema(|url| {
        let pool = pool_of_one(&url);
        {
            let mut c = pool.acquire().unwrap();
            c.batch_execute("CREATE TABLE dirty(v int8 UNIQUE)")
                .unwrap();
            c.batch_execute("BEGIN; INSERT INTO dirty VALUES (1)")
                .unwrap();
            assert!(c.batch_execute("INSERT INTO dirty VALUES (1)").is_err());
            assert_eq!(c.tx_status(), TxStatus::Failed);
        }
        {
            let mut c = pool.acquire().unwrap();
            c.batch_execute("BEGIN; INSERT INTO dirty VALUES (2)")
                .unwrap();
            assert_eq!(c.tx_status(), TxStatus::InTransaction);
        }
        let mut c = pool.acquire().unwrap();
        assert_eq!(c.tx_status(), TxStatus::Idle);
        let n: i64 = c
            .query_one("SELECT count(*) FROM dirty", &[])
            .unwrap()
            .get(0)
            .unwrap();
        assert_eq!(n, 0, "both unfinished transactions were rolled back");
    });
}

#[test]
fn statement_timeout_through_db_cancels_and_the_pool_lives_on() {
    on_fresh_schema(|url| {
        let url = format!("{url}&query_timeout=200");
        let db = Db::builder(&url).pool_size(1).open().unwrap();
        let t = Instant::now();
        let e = db
            .run(|c| {
                c.pg().unwrap().batch_execute("SELECT pg_sleep(20)")?;
                Ok(())
            })
            .unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(5));
        assert!(matches!(e, Error::Postgres(pg::Error::Timeout(_))), "{e}");
        assert_eq!(e.sqlstate(), Some("57014"));
        assert_eq!(moria_orm::rest::status_of(&e), 504);
        db.ensure_schema::<Person>().unwrap();
        assert_eq!(db.count::<Person>(Query::new()).unwrap(), 0);
    });
}

#[test]
fn two_hundred_fibers_on_two_workers_share_a_pool_of_8_without_lost_or_duplicated_writes() {
    on_fresh_schema(|url| {
        let db = Db::builder(&url).pool_size(8).open().unwrap();
        db.ensure_schema::<Person>().unwrap();
        let fibers: Vec<_> = (0..200)
            .map(|f| {
                let db = db.clone();
                spawn(move || {
                    let mut ids = Vec::new();
                    for k in 0..5 {
                        ids.push(
                            db.add(Person::new(&format!("f{f}-{k}"), "c", k))
                                .unwrap()
                                .id,
                        );
                    }
                    let mut b = Batch::new();
                    for k in 5..10 {
                        b.add(Person::new(&format!("f{f}-{k}"), "c", k));
                    }
                    ids.extend(db.batch_send(b).unwrap());
                    db.transaction(move |c| {
                        let mut p: Person = c.get(ids[0])?;
                        p.age += 100;
                        c.update(&mut p)?;
                        Ok(ids)
                    })
                    .unwrap()
                })
            })
            .collect();
        let mut all = HashSet::new();
        for f in fibers {
            for id in f.join().unwrap() {
                assert!(all.insert(id), "id {id} handed out twice");
            }
        }
        assert_eq!(all.len(), 2000);
        let rows = db.list::<Person>(Query::new()).unwrap();
        assert_eq!(rows.len(), 2000);
        let names: HashSet<_> = rows.iter().map(|p| p.name.clone()).collect();
        assert_eq!(names.len(), 2000);
        assert_eq!(rows.iter().filter(|p| p.age >= 100).count(), 200);
    });
}
