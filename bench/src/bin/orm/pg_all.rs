//! `--pg-all`: the PostgreSQL "All" column alone (every row of `Sample` in one select), like
//! for like. Both clients send the same SELECT text, prepared once per connection (moria-orm's
//! statement cache; tokio-postgres `prepare`), each run one Bind/Execute/Sync with every column
//! in binary and no row limit, one statement in flight on one connection (the `Db`'s shared
//! pipelined connection; the peer's only one). Two pairs, all four in turn within every run
//! (the order rotating from run to run):
//!
//! - models: moria-orm `Db::list` (a `Vec<Sample>`) against tokio-postgres rows read into a
//!   struct of the same seven fields;
//! - raw rows: moria `SharedClient::query` and tokio-postgres `query` (a `Vec<Row>`), three
//!   columns read from each row.
//!
//! Beside the rate, per 1,000 rows: the CPU time of this process (user + system, every thread)
//! and, on the bench's own server, of the PostgreSQL backend serving the reader
//! (`/proc/PID/schedstat`). Load on a shared machine moves the rate, much less the CPU.

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

/// CPU time used so far by process `pid` (the first field of its schedstat, nanoseconds).
fn process_cpu(pid: i32) -> Option<Duration> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).ok()?;
    let ns = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// One run of one reader: rows/s, and CPU µs per 1,000 rows of this process and of the
/// server backend (`None` when it cannot be read).
#[derive(Clone, Copy)]
struct Figures {
    rate: u64,
    cpu: u64,
    server: Option<u64>,
}

/// A reader under test: its label, the backend serving it, one run (the wall time), and the
/// figures of its runs so far.
struct Reader<'a> {
    label: &'static str,
    backend: Option<i32>,
    run: Box<dyn FnMut() -> Duration + 'a>,
    runs: Vec<Figures>,
}

impl Reader<'_> {
    /// Runs once, reading `rows` rows, and records the figures.
    fn measure(&mut self, rows: usize) {
        let per_k = |d: Duration| (d.as_micros() * 1000 / rows as u128) as u64;
        let server = self.backend.and_then(process_cpu);
        let cpu = cpu_time();
        let wall = (self.run)();
        let used = cpu_time() - cpu;
        let server = server.and_then(|s| Some(per_k(process_cpu(self.backend?)? - s)));
        self.runs.push(Figures {
            rate: rate(rows, wall),
            cpu: per_k(used),
            server,
        });
    }

    /// Medians: rate, client CPU, server CPU.
    fn medians(&self) -> (u64, u64, Option<u64>) {
        let server: Vec<u64> = self.runs.iter().filter_map(|f| f.server).collect();
        (
            median(self.runs.iter().map(|f| f.rate).collect()),
            median(self.runs.iter().map(|f| f.cpu).collect()),
            (!server.is_empty()).then(|| median(server)),
        )
    }

    /// Prints the medians, and the ratios to `peer` when given.
    fn print(&self, peer: Option<&Reader<'_>>) {
        let (r, c, s) = self.medians();
        let s = s.map_or("-".into(), |s| s.to_string());
        let all: Vec<String> = self.runs.iter().map(|f| f.rate.to_string()).collect();
        let ratio = peer.map_or(String::new(), |p| {
            let (pr, pc, _) = p.medians();
            format!(
                "  rate ×{:.2}, client CPU ×{:.2} of tokio-postgres",
                r as f64 / pr.max(1) as f64,
                c as f64 / pc.max(1) as f64
            )
        });
        println!(
            "{:<34} {r:>9} rows/s {c:>5} µs client {s:>5} µs server{ratio}\n{:<34} (runs: {})",
            self.label,
            "",
            all.join(" ")
        );
    }
}

/// `--pg-all`: fills `Sample` once per transport, then `runs` rounds of the four readers.
pub(crate) fn pg_all(b: &mut Bench, rt: &Runtime) {
    let (rows, runs) = (b.args.rows, b.args.runs);
    let (server, list) = transports(b);
    // A backend's process can be read only when the bench started the server.
    let local = server.is_some();
    println!(
        "PostgreSQL All: {rows} rows in one select, median of {runs} runs, {} workers; CPU per 1,000 rows: client = this process (user + system), server = the backend serving the reader",
        b.args.workers
    );
    for (label, url, kv) in &list {
        pg_reset(url);
        let u = url.clone();
        let (pool, pipelined) = (b.args.pg_pool, b.args.pg_pipelined);
        let (db, db_backend): (Db, i32) = rt
            .run(move || {
                let db = pg_db(&u, pool, pipelined);
                db.ensure_schema::<Sample>().expect("schema");
                insert_rows(&db, Insert::BatchTrans, rows);
                // The shared connection a lone caller's `Db::list` takes (the least busy,
                // the first on a tie).
                let shared = db.pg_pool().and_then(|p| p.shared()).expect("shared");
                let pid = shared.expect("shared connection").backend_pid();
                (db, pid)
            })
            .expect("fiber");
        let tokio = tokio_pg::runtime();
        let peer = tokio.block_on(tokio_pg::connect(kv));
        let stmt = tokio.block_on(tokio_pg::prepare_all(&peer));
        let peer_backend = tokio.block_on(tokio_pg::backend_pid(&peer));
        let shared = moria_orm::pg::SharedClient::connect(url).expect("shared connection");
        let backend = |pid: i32| local.then_some(pid);
        let mut readers = [
            Reader {
                label: "moria Db::list (models)",
                backend: backend(db_backend),
                run: Box::new(|| {
                    let d = db.clone();
                    rt.run(move || {
                        let t = Instant::now();
                        let all: Vec<Sample> = d.list(Query::new()).expect("all");
                        let t = t.elapsed();
                        assert_eq!(all.len(), rows);
                        let r = &all[0];
                        assert!(r.id > 0 && !r.first_name.is_empty() && !r.last_name.is_empty());
                        assert!(r.amount > 0.0 && !r.birth_date.is_empty());
                        assert!(r.last_change.0 > 0 && r.created_at.0 > 0);
                        t
                    })
                    .expect("fiber")
                }),
                runs: Vec::new(),
            },
            Reader {
                label: "tokio-postgres query (models)",
                backend: backend(peer_backend),
                run: Box::new(|| tokio.block_on(tokio_pg::all(&peer, &stmt, rows))),
                runs: Vec::new(),
            },
            Reader {
                label: "moria SharedClient::query (3 col)",
                backend: backend(shared.backend_pid()),
                run: Box::new(|| {
                    let s = shared.clone();
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
                }),
                runs: Vec::new(),
            },
            Reader {
                label: "tokio-postgres query (3 col)",
                backend: backend(peer_backend),
                run: Box::new(|| tokio.block_on(tokio_pg::all_columns(&peer, &stmt, rows))),
                runs: Vec::new(),
            },
        ];
        let n = readers.len();
        for run in 0..runs {
            for k in 0..n {
                readers[(run + k) % n].measure(rows);
            }
        }
        println!("\n{label}");
        readers[0].print(Some(&readers[1]));
        readers[1].print(None);
        readers[2].print(Some(&readers[3]));
        readers[3].print(None);
    }
    drop(server);
}
