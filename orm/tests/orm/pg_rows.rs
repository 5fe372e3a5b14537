//! Rows from PostgreSQL as they arrive, against the real server: a large result reaches a row
//! handler row by row with every value right (an exclusive `Client`, a `SharedClient` read by
//! the calling fiber, and one read for fibers that wait), a handler's error or panic ends only
//! its own call, `Db::list` and `Db::json` stream a table with NULLs intact (on SQLite too), and the shared
//! connection's in-flight window keeps requests and results larger than the socket buffers
//! from deadlocking.

use std::sync::mpsc;
use std::time::Duration;

use moria_orm::pg::{Client, Error, RowRef, SharedClient, MAX_IN_FLIGHT_BYTES};
use moria_orm::{JsonFormat, Query};
use moria_runtime::spawn;

use crate::common::{self, Engine, Every};

fn run<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    common::runtime().run(f).unwrap()
}

/// 50,000 rows: `n`, `n` as text, and NULL for every third.
const SERIES: &str =
    "SELECT n::int8, n::text, CASE WHEN n % 3 = 0 THEN NULL ELSE n * 0.5 END::float8 \
                      FROM generate_series(1, $1::int8) AS n";
const ROWS: i64 = 50_000;

/// Checks row `n` of [`SERIES`].
fn check(row: RowRef<'_>, n: i64) -> Result<(), Error> {
    assert_eq!(row.get::<i64>(0)?, n);
    assert_eq!(row.get::<&str>(1)?, n.to_string());
    let half: Option<f64> = row.get(2)?;
    assert_eq!(half, (n % 3 != 0).then_some(n as f64 * 0.5));
    Ok(())
}

/// Runs `query` with a handler that checks each row of [`SERIES`] in order, then that there
/// were `count` of them.
fn expect_series(count: i64, query: impl FnOnce(&mut RowHandler<'_>) -> Result<u64, Error>) {
    let mut n = 0;
    query(&mut |row| {
        n += 1;
        check(row, n)
    })
    .unwrap();
    assert_eq!(n, count);
}

/// A row handler, as the clients take it.
type RowHandler<'h> = dyn FnMut(RowRef<'_>) -> Result<(), Error> + 'h;

#[test]
fn a_large_result_reaches_the_row_handler_row_by_row() {
    let cfg = common::pg_server().config("postgres");
    run(move || {
        let mut c = Client::connect_config(&cfg).unwrap();
        let stmt = c.prepare(SERIES).unwrap();
        expect_series(ROWS, |each| c.query_each(&stmt, &[&ROWS], each));
        let s = SharedClient::connect_config(&cfg).unwrap();
        expect_series(ROWS, |each| s.query_each(SERIES, &[&ROWS], each));
        let set = c.query_set(SERIES, &[&ROWS]).unwrap();
        assert_eq!(set.len(), ROWS as usize);
        for (i, row) in set.iter().enumerate() {
            check(row, i as i64 + 1).unwrap();
        }
    });
}

#[test]
fn fibers_sharing_a_connection_each_get_their_rows_whoever_reads_them() {
    let cfg = common::pg_server().config("postgres");
    run(move || {
        let s = SharedClient::connect_config(&cfg).unwrap();
        let handles: Vec<_> = (0..32i64)
            .map(|f| {
                let s = s.clone();
                spawn(move || {
                    for i in 0..20 {
                        let count = 1 + (f * 37 + i * 11) % 400;
                        expect_series(count, |each| s.query_each(SERIES, &[&count], each));
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(s.pending(), 0);
        assert!(!s.is_broken());
    });
}

#[test]
fn a_row_handler_error_or_panic_ends_only_its_own_call() {
    let cfg = common::pg_server().config("postgres");
    run(move || {
        let s = SharedClient::connect_config(&cfg).unwrap();
        let mut seen = 0;
        let err = s
            .query_each(SERIES, &[&1000i64], &mut |_| {
                seen += 1;
                match seen {
                    10 => Err(Error::Conversion("enough".into())),
                    _ => Ok(()),
                }
            })
            .unwrap_err();
        assert!(
            matches!(err, Error::Conversion(ref m) if m == "enough"),
            "{err:?}"
        );
        assert_eq!(seen, 10, "no row after the error reaches the handler");
        // A lone fiber reads its own rows: the panic happens while it drives the connection,
        // and comes back to it once the connection is handed on.
        let s2 = s.clone();
        let panicked = spawn(move || {
            s2.query_each(SERIES, &[&1000i64], &mut |row| {
                if row.get::<i64>(0)? == 500 {
                    panic!("handler panic");
                }
                Ok(())
            })
        })
        .join();
        assert!(panicked.is_err());
        // The same with fibers queued behind it: they all get their answers.
        let others: Vec<_> = (0..16i64)
            .map(|f| {
                let s = s.clone();
                spawn(move || {
                    let rows = s.query(SERIES, &[&(f + 1)]).unwrap();
                    assert_eq!(rows.len(), f as usize + 1);
                })
            })
            .collect();
        let s3 = s.clone();
        let panicked = spawn(move || {
            s3.query_each(SERIES, &[&1000i64], &mut |_| -> Result<(), Error> {
                panic!("handler panic")
            })
        })
        .join();
        assert!(panicked.is_err());
        for h in others {
            h.join().unwrap();
        }
        assert!(!s.is_broken());
        assert_eq!(s.query(SERIES, &[&3i64]).unwrap().len(), 3);
    });
}

both!(db_list_and_json_stream_a_table_with_nulls_intact);

fn db_list_and_json_stream_a_table_with_nulls_intact(kind: Engine) {
    let db = common::db(kind);
    run(move || {
        db.ensure_schema::<Every>().unwrap();
        let mut batch = moria_orm::Batch::new();
        for i in 0..3000i64 {
            batch.add(Every {
                i,
                small: i as i32,
                f: i as f64 / 4.0,
                b: i % 2 == 0,
                s: format!("row {i}"),
                bytes: vec![i as u8; (i % 5) as usize],
                maybe_i: (i % 3 != 0).then_some(i),
                maybe_s: (i % 4 == 0).then(|| format!("m{i}")),
                ..Default::default()
            });
        }
        db.batch_send(batch).unwrap();
        let all: Vec<Every> = db
            .list(Query::new().order_by("i", moria_orm::Order::Asc))
            .unwrap();
        assert_eq!(all.len(), 3000);
        for (k, e) in all.iter().enumerate() {
            let i = k as i64;
            assert_eq!((e.i, e.small, e.b), (i, i as i32, i % 2 == 0));
            assert_eq!(e.f, i as f64 / 4.0);
            assert_eq!(e.s, format!("row {i}"));
            assert_eq!(e.bytes, vec![i as u8; (i % 5) as usize]);
            assert_eq!(e.maybe_i, (i % 3 != 0).then_some(i));
            assert_eq!(e.maybe_s, (i % 4 == 0).then(|| format!("m{i}")));
        }
        let json = db
            .json::<Every>(
                Query::new().order_by("i", moria_orm::Order::Asc),
                JsonFormat::Expanded,
            )
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let list = v.as_array().unwrap();
        assert_eq!(list.len(), 3000);
        assert_eq!(list[3]["maybe_i"], serde_json::Value::Null);
        assert_eq!(list[4]["maybe_s"], "m4");
        assert_eq!(list[5]["s"], "row 5");
    });
}

#[test]
fn requests_and_results_larger_than_the_socket_buffers_do_not_deadlock() {
    // 32 fibers each send 512 KiB and get it back over the Unix socket (socket buffers of a
    // few hundred KiB): written all at once, the server would block writing the first result
    // while the driver blocks writing the rest. The window (MAX_IN_FLIGHT_BYTES) prevents that.
    const SIZE: usize = 512 * 1024;
    const FIBERS: usize = 32;
    const { assert!(SIZE > MAX_IN_FLIGHT_BYTES) };
    let cfg = common::pg_server().unix_config("postgres");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let done = common::runtime().run(move || {
            let s = SharedClient::connect_config(&cfg).unwrap();
            let handles: Vec<_> = (0..FIBERS)
                .map(|f| {
                    let s = s.clone();
                    spawn(move || {
                        let text = char::from(b'a' + (f % 26) as u8).to_string().repeat(SIZE);
                        let rows = s.query("SELECT $1::text AS t", &[&text]).unwrap();
                        assert_eq!(rows[0].get::<&str>("t").unwrap(), text);
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            assert!(!s.is_broken());
        });
        let _ = tx.send(done.is_ok());
    });
    // A bound on a hang, not a timing assertion: 32 MiB over a Unix socket takes well under
    // a second; only a deadlock reaches this.
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(ok) => assert!(ok, "a fiber failed"),
        Err(_) => panic!("the shared connection deadlocked on large requests and results"),
    }
}
