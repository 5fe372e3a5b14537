//! The PostgreSQL comparison: moria-orm's `Db` over a Unix socket and TCP beside tokio-postgres,
//! and the concurrent by-one column on both backends.

use std::sync::Arc;
use std::time::{Duration, Instant};

use moria_orm::{now_millis, Db, Model, Query};
use moria_runtime::Runtime;

use crate::db_rows::{dispatch_by_one, insert_rows, sqlite_concurrent_rows, verify};
use crate::harness::{Bench, Insert, CONCURRENT};
use crate::report::{median, print_table, rate, Line};
use crate::sample::{sample, Sample};

#[path = "../../../peers/tokio_pg.rs"]
pub(crate) mod tokio_pg;

/// PostgreSQL `Db` inserts: the time to insert (without the check) and the ids.
fn pg_db_insert(db: &Db, kind: Insert, rows: usize) -> (Duration, Vec<i64>) {
    let start = now_millis();
    let t = Instant::now();
    let ids = insert_rows(db, kind, rows);
    let d = t.elapsed();
    verify(db, &ids, start);
    (d, ids)
}

/// The PostgreSQL `Db` under test: `pool` exclusive and `pipelined` shared connections.
pub(crate) fn pg_db(url: &str, pool: usize, pipelined: usize) -> Db {
    Db::builder(url)
        .pool_options(moria_orm::pg::PoolOptions {
            max_size: pool,
            pipelined,
            ..Default::default()
        })
        .open()
        .expect("open")
}

/// Drops the `Sample` table.
pub(crate) fn pg_reset(admin: &str) {
    let mut c = moria_orm::pg::Client::connect(admin).expect("admin connection");
    c.batch_execute("DROP TABLE IF EXISTS \"Sample\"")
        .expect("drop");
}

/// One transport: moria-orm `Db` rows and tokio-postgres rows (insert, read).
fn pg_transport(
    b: &Bench,
    rt: &Runtime,
    label: &str,
    url: &str,
    tokio_params: &str,
) -> [(Line, Line); 2] {
    let (rows, runs, pool) = (b.args.rows, b.args.runs, b.args.pg_pool);
    let pipelined = b.args.pg_pipelined;
    let mut orm_ins = Vec::new();
    let mut peer_ins = Vec::new();
    let values: Vec<tokio_pg::RowValues> = (0..rows)
        .map(|i| {
            let s = sample(i);
            (
                s.first_name,
                s.last_name,
                s.amount,
                s.birth_date,
                now_millis(),
            )
        })
        .collect();
    let per_stmt = moria_orm::DEFAULT_PG_BATCH_PARAMS / Sample::FIELDS.len();
    let mut last_ids = Vec::new();
    for kind in [
        Insert::Direct,
        Insert::Batch,
        Insert::Trans,
        Insert::BatchTrans,
    ] {
        let (mut o, mut p) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            pg_reset(url);
            let u = url.to_owned();
            let (d, ids) = rt
                .run(move || {
                    let db = pg_db(&u, pool, pipelined);
                    db.ensure_schema::<Sample>().expect("schema");
                    pg_db_insert(&db, kind, rows)
                })
                .expect("fiber");
            assert_eq!(ids.len(), rows);
            o.push(rate(rows, d));
            last_ids = ids;
            pg_reset(url);
            let u = url.to_owned();
            rt.run(move || {
                let db = Db::open(&u).expect("open");
                db.ensure_schema::<Sample>().expect("schema");
            })
            .expect("fiber");
            let d = tokio_pg::runtime().block_on(async {
                let c = tokio_pg::connect(tokio_params).await;
                let batch = matches!(kind, Insert::Batch | Insert::BatchTrans);
                let trans = matches!(kind, Insert::Trans | Insert::BatchTrans);
                let (d, ids) = tokio_pg::insert(&c, &values, batch, trans, per_stmt).await;
                assert_eq!(ids.len(), rows);
                d
            });
            p.push(rate(rows, d));
        }
        orm_ins.push(median(o));
        peer_ins.push(median(p));
    }
    // Reads on the table the last tokio-postgres run left (same rows for both).
    let ids: Vec<i64> = tokio_pg::runtime().block_on(async {
        let c = tokio_pg::connect(tokio_params).await;
        c.query("SELECT \"id\" FROM \"Sample\" ORDER BY \"id\"", &[])
            .await
            .expect("ids")
            .iter()
            .map(|r| r.get(0))
            .collect()
    });
    drop(last_ids);
    let ids = Arc::new(ids);
    let (mut o1, mut oa, mut oc, mut p1, mut pa, mut pc) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    for _ in 0..runs {
        let (u, ids2) = (url.to_owned(), Arc::clone(&ids));
        let db = rt.run(move || pg_db(&u, pool, pipelined)).expect("fiber");
        let (db2, n) = (db.clone(), ids2.len());
        let (one, all) = rt
            .run(move || {
                let t = Instant::now();
                for id in ids2.iter() {
                    let s: Sample = db2.get(*id).expect("get");
                    assert_eq!(s.id, *id);
                }
                let one = t.elapsed();
                let t = Instant::now();
                let all: Vec<Sample> = db2.list(Query::new()).expect("all");
                assert_eq!(all.len(), n);
                (one, t.elapsed())
            })
            .expect("fiber");
        o1.push(rate(n, one));
        oa.push(rate(n, all));
        oc.push(dispatch_by_one(rt, &db, &ids, CONCURRENT));
        let (one, all, conc) = tokio_pg::runtime().block_on(async {
            let c = tokio_pg::connect(tokio_params).await;
            let one = tokio_pg::by_one(&c, &ids).await;
            let stmt = tokio_pg::prepare_all(&c).await;
            let all = tokio_pg::all(&c, &stmt, ids.len()).await;
            let mut clients = Vec::new();
            for _ in 0..pool {
                clients.push(tokio_pg::connect(tokio_params).await);
            }
            let conc = tokio_pg::by_one_concurrent(&clients, &ids, CONCURRENT).await;
            (one, all, conc)
        });
        p1.push(rate(ids.len(), one));
        pa.push(rate(ids.len(), all));
        pc.push(rate(ids.len() * CONCURRENT, conc));
    }
    [
        (
            Line {
                label: format!("PostgreSQL {label} (Db, pool {pool})"),
                cols: orm_ins,
            },
            Line {
                label: format!("PostgreSQL {label} (Db, {pool}+{pipelined} shared)"),
                cols: vec![median(o1), median(oa), median(oc)],
            },
        ),
        (
            Line {
                label: format!("tokio-postgres {label}"),
                cols: peer_ins,
            },
            Line {
                label: format!("tokio-postgres {label} ({pool} conns)"),
                cols: vec![median(p1), median(pa), median(pc)],
            },
        ),
    ]
}

/// The transports to measure, (label, URL, tokio-postgres parameters), and the throwaway
/// server they reach unless `--pg-url` names one.
pub(crate) fn transports(
    b: &Bench,
) -> (
    Option<moria_orm::pg::TestServer>,
    Vec<(String, String, String)>,
) {
    if let Some(url) = &b.args.pg_url {
        return (None, vec![("given".into(), url.clone(), url.clone())]);
    }
    let server = moria_orm::pg::TestServer::start().unwrap_or_else(|e| panic!("{e}"));
    let kv = |host: &str| {
        format!(
            "host={host} port={} user=moria password={} dbname=postgres sslmode=disable",
            server.port(),
            server.password()
        )
    };
    let list = vec![
        (
            "unix".into(),
            server.unix_url(),
            kv(&server.socket_dir().display().to_string()),
        ),
        ("tcp".into(), server.url(), kv("127.0.0.1")),
    ];
    (Some(server), list)
}

/// `--pg`: the PostgreSQL tables, on a throwaway server unless `--pg-url` names one.
pub(crate) fn pg_compare(b: &mut Bench, rt: &Runtime) {
    let (_server, transports) = transports(b);
    println!(
        "moria-orm on PostgreSQL: {} rows, median of {} runs, by one ×{CONCURRENT} fibers/tasks; Db: pool of {} + {} shared (pipelined) connections, {} workers",
        b.args.rows, b.args.runs, b.args.pg_pool, b.args.pg_pipelined, b.args.workers
    );
    let mut ins = Vec::new();
    let mut reads = Vec::new();
    for (label, url, kv) in &transports {
        for (i, r) in pg_transport(b, rt, label, url, kv) {
            ins.push(i);
            reads.push(r);
        }
    }
    sqlite_concurrent_rows(b, rt, &mut reads);
    print_table(
        "Insertion speed (rows/second)",
        &["Direct", "Batch", "Trans", "Batch Trans"],
        &ins,
    );
    print_table(
        "Read speed (rows/second)",
        &["By one", "All", "By one ×64"],
        &reads,
    );
}
