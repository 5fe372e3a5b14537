//! The shared (pipelined) PostgreSQL connection against a real server: 64 fibers on 2 workers
//! share one connection and each gets its own rows; a statement error in the middle of a
//! pipelined batch fails only that statement; a timeout cancels only the late statement; the
//! server killing the connection mid-batch fails every request on it (none hangs, none gets
//! rows) and the pool replaces it.
//!
//! To build a batch deterministically, a first statement waits on the server for an advisory
//! lock another session holds; the requests queued behind it go out together when it answers.

use std::time::Duration;

use moria_orm::pg::types::ToSql;
use moria_orm::pg::{Client, Config, Error, Pool, PoolOptions, Row, SharedClient};
use moria_runtime::{spawn, yield_now, JoinHandle};

use crate::common;

fn run<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    common::runtime().run(f).unwrap()
}

fn cfg() -> Config {
    common::pg_server().config("postgres")
}

/// Yields until `n` requests are queued or in flight on `s`.
fn wait_pending(s: &SharedClient, n: usize) {
    while s.pending() < n {
        yield_now();
    }
}

/// A session holding advisory lock `key`, and a fiber whose statement on `s` waits for it on
/// the server (queued and in flight when this returns).
fn blocked_head(s: &SharedClient, key: i64) -> (Client, JoinHandle<Result<Vec<Row>, Error>>) {
    let wait = format!("SELECT pg_advisory_xact_lock({key})");
    // Prepared while the lock is free, so that the blocked call is one request (an execute).
    s.query(&wait, &[]).unwrap();
    let mut admin = Client::connect_config(&cfg()).unwrap();
    admin
        .batch_execute(&format!("SELECT pg_advisory_lock({key})"))
        .unwrap();
    let s2 = s.clone();
    let head = spawn(move || s2.query(&wait, &[]));
    wait_pending(s, 1);
    (admin, head)
}

/// `n` fibers running `sql` with `$1` = their index, queued on `s` in index order behind the
/// `base` requests already there.
fn queue_behind(
    s: &SharedClient,
    base: usize,
    n: i64,
    sql: &'static str,
) -> Vec<JoinHandle<Result<Vec<Row>, Error>>> {
    (0..n)
        .map(|i| {
            let s2 = s.clone();
            let h = spawn(move || s2.query(sql, &[&i]));
            wait_pending(s, base + i as usize + 1);
            h
        })
        .collect()
}

/// Joins every fiber, then checks that `s` has nothing left in flight and still works.
fn settle(s: &SharedClient, handles: Vec<JoinHandle<()>>) {
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(s.pending(), 0);
    assert!(!s.is_broken());
}

/// One-parameter sets for [`SharedClient::query_many`], borrowing `values`.
fn one_each(values: &[i64]) -> Vec<[&(dyn ToSql + Sync); 1]> {
    values.iter().map(|v| [v as _]).collect()
}

#[test]
fn many_fibers_on_two_workers_each_get_their_own_rows() {
    run(|| {
        let s = SharedClient::connect_config(&cfg()).unwrap();
        let handles: Vec<_> = (0..64i64)
            .map(|f| {
                let s = s.clone();
                spawn(move || {
                    for i in 0..200i64 {
                        let v = f * 1000 + i;
                        let t = format!("fiber {f}");
                        let n = (i % 3 + 1) as i32;
                        let rows = s
                            .query(
                                "SELECT $1::int8 AS v, $2::text AS t, generate_series(1, $3::int4) AS n",
                                &[&v, &t, &n],
                            )
                            .unwrap();
                        assert_eq!(rows.len(), n as usize);
                        for (k, r) in rows.iter().enumerate() {
                            assert_eq!(r.get::<i64>("v").unwrap(), v);
                            assert_eq!(r.get::<String>("t").unwrap(), t);
                            assert_eq!(r.get::<i32>("n").unwrap(), k as i32 + 1);
                        }
                    }
                })
            })
            .collect();
        settle(&s, handles);
    });
}

#[test]
fn a_statement_error_in_the_middle_of_a_pipelined_batch_fails_only_that_statement() {
    run(|| {
        let s = SharedClient::connect_config(&cfg()).unwrap();
        const DIV: &str = "SELECT 100 / ($1::int8 - 4) AS q";
        // Prepared now, so that the batch below is nine executes.
        assert_eq!(
            s.query(DIV, &[&5i64]).unwrap()[0].get::<i64>("q").unwrap(),
            100
        );
        let (mut admin, head) = blocked_head(&s, 7101);
        let calls = queue_behind(&s, 1, 9, DIV);
        admin
            .batch_execute("SELECT pg_advisory_unlock(7101)")
            .unwrap();
        assert_eq!(head.join().unwrap().unwrap().len(), 1);
        for (i, h) in calls.into_iter().enumerate() {
            let d = i as i64 - 4;
            match h.join().unwrap() {
                Ok(rows) => {
                    assert_ne!(d, 0);
                    assert_eq!(rows.len(), 1);
                    assert_eq!(rows[0].get::<i64>("q").unwrap(), 100 / d);
                }
                Err(e) => {
                    assert_eq!(d, 0, "call {i} failed: {e}");
                    assert_eq!(e.code(), "22012", "{e}");
                }
            }
        }
        assert!(!s.is_broken());
        assert_eq!(s.execute("SELECT 1", &[]).unwrap(), 1);
    });
}

#[test]
fn a_timeout_cancels_only_the_late_statement() {
    run(|| {
        let mut c = cfg();
        c.query_timeout = Some(Duration::from_millis(300));
        let s = SharedClient::connect_config(&c).unwrap();
        const ECHO: &str = "SELECT $1::int8 AS v";
        s.query(ECHO, &[&0i64]).unwrap();
        let (_admin, head) = blocked_head(&s, 7102);
        let calls = queue_behind(&s, 1, 5, ECHO);
        let e = head.join().unwrap().unwrap_err();
        assert!(matches!(e, Error::Timeout(_)), "{e}");
        for (i, h) in calls.into_iter().enumerate() {
            let rows = h.join().unwrap().unwrap();
            assert_eq!(rows[0].get::<i64>("v").unwrap(), i as i64);
        }
        assert!(!s.is_broken());
    });
}

#[test]
fn the_server_killing_the_connection_mid_batch_fails_every_request_on_it() {
    run(|| {
        let pool = Pool::new(
            cfg(),
            PoolOptions {
                max_size: 2,
                pipelined: 1,
                ..PoolOptions::default()
            },
        )
        .unwrap();
        let s = pool.shared().unwrap().unwrap();
        const ECHO: &str = "SELECT $1::int8 AS v";
        s.query(ECHO, &[&0i64]).unwrap();
        let (mut admin, head) = blocked_head(&s, 7103);
        let calls = queue_behind(&s, 1, 8, ECHO);
        let killed = admin
            .query_one("SELECT pg_terminate_backend($1)", &[&s.backend_pid()])
            .unwrap();
        assert!(killed.get::<bool>(0).unwrap());
        assert!(head.join().unwrap().is_err());
        for h in calls {
            let e = h.join().unwrap().unwrap_err();
            assert!(matches!(e, Error::Closed), "{e}");
        }
        assert!(s.is_broken());
        assert!(matches!(s.query(ECHO, &[&1i64]), Err(Error::Closed)));
        let fresh = pool.shared().unwrap().unwrap();
        assert_ne!(fresh.backend_pid(), s.backend_pid());
        assert_eq!(
            fresh.query(ECHO, &[&7i64]).unwrap()[0]
                .get::<i64>("v")
                .unwrap(),
            7
        );
    });
}

#[test]
fn query_many_answers_each_parameter_set_in_order_and_a_failing_one_alone() {
    run(|| {
        let s = SharedClient::connect_config(&cfg()).unwrap();
        const DIV: &str = "SELECT 100 / ($1::int8 - 4) AS q, $1::int8 AS d";
        // First use prepares the statement; the second finds it cached.
        for _ in 0..2 {
            let ds: Vec<i64> = (0..9).collect();
            let sets = one_each(&ds);
            let params: Vec<_> = sets.iter().map(|p| &p[..]).collect();
            let results = s.query_many(DIV, &params).unwrap();
            assert_eq!(results.len(), 9);
            for (d, r) in ds.iter().zip(results) {
                if *d == 4 {
                    let e = r.expect_err("division by zero must fail");
                    assert!(e.to_string().contains("division by zero"), "{e}");
                } else {
                    let rows = r.unwrap();
                    assert_eq!(rows[0].get::<i64>("d").unwrap(), *d);
                    assert_eq!(rows[0].get::<i64>("q").unwrap(), 100 / (d - 4));
                }
            }
        }
        assert!(s.query_many(DIV, &[]).unwrap().is_empty());
        // 32 fibers, each with 50 parameter sets, interleaved on the one connection.
        let handles: Vec<_> = (0..32i64)
            .map(|f| {
                let s = s.clone();
                spawn(move || {
                    let vs: Vec<i64> = (0..50).map(|i| f * 1000 + i).collect();
                    let sets = one_each(&vs);
                    let params: Vec<_> = sets.iter().map(|p| &p[..]).collect();
                    let got = s.query_many("SELECT $1::int8 AS v", &params).unwrap();
                    for (v, r) in vs.iter().zip(got) {
                        assert_eq!(r.unwrap()[0].get::<i64>("v").unwrap(), *v);
                    }
                })
            })
            .collect();
        settle(&s, handles);
    });
}

#[test]
fn query_many_with_a_statement_that_does_not_prepare_fails_whole() {
    run(|| {
        let s = SharedClient::connect_config(&cfg()).unwrap();
        let one = 1i64;
        let set: [&(dyn ToSql + Sync); 1] = [&one];
        let e = s
            .query_many("SELECT nope FROM nowhere WHERE $1::int8 = 1", &[&set[..]])
            .unwrap_err();
        assert!(e.to_string().contains("nowhere"), "{e}");
        assert!(!s.is_broken());
        assert_eq!(s.query("SELECT 1::int8 AS x", &[]).unwrap().len(), 1);
    });
}

#[test]
fn a_light_load_keeps_to_the_first_shared_connection() {
    const FILL: usize = 16;
    run(|| {
        let pool = Pool::new(
            cfg(),
            PoolOptions {
                pipelined: 3,
                shared_fill: FILL,
                ..PoolOptions::default()
            },
        )
        .unwrap();
        let first = pool.shared().unwrap().unwrap();
        for _ in 0..10 {
            let s = pool.shared().unwrap().unwrap();
            assert_eq!(s.backend_pid(), first.backend_pid());
            s.query("SELECT 1::int8 AS x", &[]).unwrap();
        }
        // Past FILL pending requests the next connection takes new ones.
        let (mut admin, head) = blocked_head(&first, 7_001);
        let queued = queue_behind(&first, 1, FILL as i64 - 1, "SELECT $1::int8 AS v");
        let next = pool.shared().unwrap().unwrap();
        assert_ne!(next.backend_pid(), first.backend_pid());
        admin
            .batch_execute("SELECT pg_advisory_unlock_all()")
            .unwrap();
        head.join().unwrap().unwrap();
        for (i, h) in queued.into_iter().enumerate() {
            assert_eq!(
                h.join().unwrap().unwrap()[0].get::<i64>("v").unwrap(),
                i as i64
            );
        }
    });
}
