//! `--pg-all`: the PostgreSQL "All" column alone (every row of `Sample` in one select), with
//! the CPU time this process spent per 1,000 rows beside the rate: moria-orm's `Db::list`
//! (whole models), moria's `SharedClient::query` reading the columns the peer reads, and
//! tokio-postgres `query` — in turn within every run, over the Unix socket and TCP. The
//! server is a child process, so its CPU is not counted; load on a shared machine moves the
//! rate, much less the CPU per row.

use std::time::{Duration, Instant};

use moria_orm::{Db, Query};
use moria_runtime::Runtime;

use crate::db_rows::insert_rows;
use crate::harness::{Bench, Insert};
use crate::pg::{pg_db, pg_reset, tokio_pg, transports};
use crate::report::{median, rate};
use crate::sample::Sample;

/// CPU time (user + system) used so far by this process, every thread.
fn cpu_time() -> Duration {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Runs `f` (which reads `rows` rows): rows/s and CPU µs per 1,000 rows.
fn measure(rows: usize, f: impl FnOnce() -> Duration) -> (u64, u64) {
    let cpu = cpu_time();
    let wall = f();
    let used = cpu_time() - cpu;
    (
        rate(rows, wall),
        (used.as_micros() * 1000 / rows as u128) as u64,
    )
}

/// Prints one figure line: median rate and median CPU of `runs`, and the ratio to `peer`.
fn line(label: &str, runs: &[(u64, u64)], peer: Option<&[(u64, u64)]>) {
    let rates = median(runs.iter().map(|r| r.0).collect());
    let cpu = median(runs.iter().map(|r| r.1).collect());
    let all_rates: Vec<String> = runs.iter().map(|r| r.0.to_string()).collect();
    let ratio = peer.map_or(String::new(), |p| {
        let pr = median(p.iter().map(|r| r.0).collect());
        let pc = median(p.iter().map(|r| r.1).collect());
        format!(
            "  rate ×{:.2}, CPU ×{:.2} of tokio-postgres",
            rates as f64 / pr as f64,
            cpu as f64 / pc.max(1) as f64
        )
    });
    println!(
        "{label:<40} {rates:>9} rows/s {cpu:>7} µs CPU/1k rows  (runs: {}){ratio}",
        all_rates.join(" ")
    );
}

/// `--pg-all`: fills `Sample` once per transport, then `runs` rounds of the three readers.
pub(crate) fn pg_all(b: &mut Bench, rt: &Runtime) {
    let (rows, runs) = (b.args.rows, b.args.runs);
    let (server, list) = transports(b);
    println!(
        "PostgreSQL All: {rows} rows in one select, median of {runs} runs, {} workers; CPU = this process (user + system)",
        b.args.workers
    );
    for (label, url, kv) in &list {
        pg_reset(url);
        let u = url.clone();
        let (pool, pipelined) = (b.args.pg_pool, b.args.pg_pipelined);
        let db: Db = rt
            .run(move || {
                let db = pg_db(&u, pool, pipelined);
                db.ensure_schema::<Sample>().expect("schema");
                insert_rows(&db, Insert::BatchTrans, rows);
                db
            })
            .expect("fiber");
        let tokio = tokio_pg::runtime();
        let peer = tokio.block_on(tokio_pg::connect(kv));
        let shared = moria_orm::pg::SharedClient::connect(url).expect("shared connection");
        let (mut list_runs, mut raw_runs, mut peer_runs) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let d = db.clone();
            list_runs.push(measure(rows, || {
                rt.run(move || {
                    let t = Instant::now();
                    let all: Vec<Sample> = d.list(Query::new()).expect("all");
                    assert_eq!(all.len(), rows);
                    t.elapsed()
                })
                .expect("fiber")
            }));
            let s = shared.clone();
            raw_runs.push(measure(rows, || {
                rt.run(move || {
                    let t = Instant::now();
                    let all = s.query(tokio_pg::SELECT_ALL, &[]).expect("all");
                    for r in &all {
                        let _: i64 = r.get(0).expect("id");
                        let _: String = r.get(1).expect("first name");
                        let _: f64 = r.get(3).expect("amount");
                    }
                    assert_eq!(all.len(), rows);
                    t.elapsed()
                })
                .expect("fiber")
            }));
            peer_runs.push(measure(rows, || tokio.block_on(tokio_pg::all(&peer, rows))));
        }
        println!("\n{label}");
        line("moria Db::list (models)", &list_runs, Some(&peer_runs));
        line("moria SharedClient::query", &raw_runs, Some(&peer_runs));
        line("tokio-postgres query", &peer_runs, None);
    }
    drop(server);
}
