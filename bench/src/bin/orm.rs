//! mORMot 2's `extdb-bench` on moria-orm: 4 insert modes × 4 SQLite engines, 2 read modes,
//! printed as rows/s in mORMot's layout, beside raw rusqlite doing the same work and the
//! fiber-side `Db` for each dispatch (the design comparison of issue 7), and the same work over
//! REST on loopback (moria-http server, one keep-alive client).
//!
//! Every figure is the median of `--runs` runs, each on a fresh database. Rates are
//! `rows * 1e6 / elapsed_µs`, as mORMot's `TPrecisionTimer.PerSec` computes them.

use std::fmt::Write as _;
use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use moria_http::client::read_response;
use moria_http::{Router, Server};
use moria_orm::rusqlite::{self, params};
use moria_orm::{
    model, now_millis, Batch, Conn, CreateTime, Db, Dispatch, ModTime, Mode, Model, Order, Query,
    Rest,
};
use moria_runtime::Runtime;

model! {
    /// mORMot's `TOrmSample`.
    pub struct Sample {
        pub first_name: String,
        pub last_name: String,
        pub amount: f64,
        pub birth_date: String,
        pub last_change: ModTime,
        pub created_at: CreateTime,
    }
}

/// Row mORMot leaves with an empty FirstName.
const VOID_INDEX: usize = 150;

#[derive(Parser, Debug)]
#[command(about = "mORMot 2 extdb-bench on moria-orm")]
struct Args {
    /// Rows per test (mORMot: 10000).
    #[arg(long, default_value_t = 10_000)]
    rows: usize,
    /// Rows for Direct inserts with synchronous=FULL (mORMot: 200).
    #[arg(long, default_value_t = 200)]
    full_direct_rows: usize,
    /// Runs per figure; the median is printed.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Directory for the database files.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Skip the fiber-side Db rows.
    #[arg(long)]
    no_db: bool,
    /// Skip the REST rows.
    #[arg(long)]
    no_rest: bool,
    /// Only measure this machine's cross-thread wake-up cost (std threads, no Moria code).
    #[arg(long)]
    baseline: bool,
    /// Only these engines (full, off, exc, memory); default all.
    #[arg(long, value_delimiter = ',')]
    engines: Vec<String>,
    /// Only compare batch statement shapes (rows per INSERT, bound ids or not), in memory.
    #[arg(long)]
    shapes: bool,
    /// Only compare `Db` dispatches on by-one reads from fibers (1 and 8 concurrent fibers).
    #[arg(long)]
    dispatch: bool,
    /// Only the PostgreSQL comparison: moria-orm over Unix socket and TCP beside tokio-postgres,
    /// and the concurrent by-one column (64 fibers) on both backends. Starts a throwaway server
    /// unless `--pg-url` names one.
    #[arg(long)]
    pg: bool,
    /// PostgreSQL server for `--pg` (its `Sample` table is dropped and recreated).
    #[arg(long)]
    pg_url: Option<String>,
    /// Pool size of the PostgreSQL `Db` (and connections of the tokio-postgres peer).
    #[arg(long, default_value_t = 8)]
    pg_pool: usize,
    /// Shared (pipelined) connections of the PostgreSQL `Db`, on top of the pool.
    #[arg(long, default_value_t = moria_orm::pg::DEFAULT_PIPELINED)]
    pg_pipelined: usize,
    /// Scheduler workers of the runtime the `Db` rows run on (the tokio-postgres peer runs on
    /// one thread).
    #[arg(long, default_value_t = 2)]
    workers: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Insert {
    Direct,
    Batch,
    Trans,
    BatchTrans,
}

const INSERTS: [Insert; 4] = [
    Insert::Direct,
    Insert::Batch,
    Insert::Trans,
    Insert::BatchTrans,
];

const ENGINES: [(&str, &str, Mode); 4] = [
    ("full", "Sqlite file full", Mode::Full),
    ("off", "Sqlite file off", Mode::Off),
    ("exc", "Sqlite file off exc", Mode::OffExclusive),
    ("memory", "Sqlite in memory", Mode::Memory),
];

/// Days since 1970-01-01 to (year, month, day) — Howard Hinnant's `civil_from_days`.
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// TDateTime day `n` (0 = 1899-12-30) as ISO-8601 text, as mORMot stores BirthDate.
fn iso_date(n: i64) -> String {
    let (y, m, d) = civil(n - 25_569);
    format!("{y:04}-{m:02}-{d:02}")
}

fn first_name(i: usize) -> String {
    if i == VOID_INDEX {
        String::new()
    } else {
        format!("Namé {}", i + 1)
    }
}

/// Row `i` as mORMot's `RunWrites` fills it.
fn sample(i: usize) -> Sample {
    Sample {
        first_name: first_name(i),
        last_name: (i + 1).to_string(),
        amount: (i + 1) as f64 * 0.01,
        birth_date: iso_date(i as i64 + 1),
        ..Default::default()
    }
}

/// mORMot's `ValueCheck`: id, amount (as cents), LastChange, FirstName.
fn check(s: &Sample, i: usize, id: i64, start: i64) {
    assert_eq!(s.id, id, "row {i}: id");
    assert_eq!(
        (s.amount * 100.0).round() as usize,
        i + 1,
        "row {i}: amount"
    );
    assert!(s.last_change.0 >= start, "row {i}: LastChange");
    assert_eq!(s.first_name, first_name(i), "row {i}: FirstName");
}

fn rate(rows: usize, d: Duration) -> u64 {
    (rows as u128 * 1_000_000 / d.as_micros().max(1)) as u64
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

struct Bench {
    args: Args,
    dir: PathBuf,
    serial: usize,
}

impl Bench {
    /// A fresh database path (memory databases ignore it).
    fn fresh(&mut self, mode: Mode) -> PathBuf {
        self.serial += 1;
        let p = self.dir.join(format!("orm-bench-{}.db", self.serial));
        if mode.is_file() {
            for ext in ["", "-wal", "-shm", "-journal"] {
                let _ = std::fs::remove_file(format!("{}{ext}", p.display()));
            }
        }
        p
    }

    fn rows_for(&self, mode: Mode, ins: Insert) -> usize {
        if mode == Mode::Full && ins == Insert::Direct {
            self.args.full_direct_rows.min(self.args.rows)
        } else {
            self.args.rows
        }
    }

    /// Median insert rate of `f` over fresh databases.
    fn insert_median(
        &mut self,
        mode: Mode,
        ins: Insert,
        mut f: impl FnMut(&Path, usize) -> (Duration, usize),
    ) -> u64 {
        let rows = self.rows_for(mode, ins);
        let runs: Vec<u64> = (0..self.args.runs)
            .map(|_| {
                let path = self.fresh(mode);
                let (d, n) = f(&path, rows);
                assert_eq!(n, rows);
                rate(rows, d)
            })
            .collect();
        median(runs)
    }
}

fn open(path: &Path, mode: Mode) -> Conn {
    let c = Conn::open(path, mode).expect("open");
    c.ensure_schema::<Sample>().expect("schema");
    c
}

/// ORM inserts through the synchronous `Conn`; returns (time, rows) and leaves the ids.
fn orm_insert(c: &Conn, ins: Insert, rows: usize, ids: &mut Vec<i64>) -> Duration {
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

fn raw_by_one(c: &Conn, ids: &[i64], start: i64) -> Duration {
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

fn raw_all(c: &Conn, ids: &[i64], start: i64) -> Duration {
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

fn orm_all(c: &Conn, ids: &[i64], start: i64) -> Duration {
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

/// Largest REST answer the bench reads (the whole table as JSON).
const MAX_REST_BODY: u64 = 1 << 30;

/// A keep-alive HTTP/1.1 client for the REST rows: one request, one response at a time, read by
/// moria-http's response decoder.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    fn connect(addr: SocketAddr) -> Client {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_nodelay(true).expect("nodelay");
        s.set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        Client {
            reader: BufReader::new(s.try_clone().expect("clone")),
            writer: s,
        }
    }

    /// Sends one request and returns (status, body).
    fn call(&mut self, method: &str, target: &str, body: &[u8]) -> (u16, Vec<u8>) {
        let mut req = Vec::with_capacity(96 + body.len());
        write!(
            req,
            "{method} {target} HTTP/1.1\r\nHost: bench\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .expect("format");
        req.extend_from_slice(body);
        self.writer.write_all(&req).expect("send");
        let res =
            read_response(&mut self.reader, method == "HEAD", MAX_REST_BODY).expect("response");
        (res.status, res.body)
    }
}

/// A server exposing `Sample` over REST on 127.0.0.1:0, on a fresh database.
fn rest_server(path: &Path, mode: Mode) -> (Server, SocketAddr) {
    let db = Db::builder(path).mode(mode).open().expect("open");
    db.ensure_schema::<Sample>().expect("schema");
    let rest = Rest::new(db, "root").table::<Sample>().max_body(64 << 20);
    let server = Server::builder()
        .listen("127.0.0.1:0")
        .max_body(64 << 20)
        .start(rest.routes(Router::new()))
        .expect("server");
    let addr = server.local_addr();
    (server, addr)
}

fn sample_json(i: usize) -> String {
    format!(
        r#"{{"first_name":{},"last_name":"{}","amount":{},"birth_date":"{}"}}"#,
        serde_json::to_string(&first_name(i)).expect("json"),
        i + 1,
        (i + 1) as f64 * 0.01,
        iso_date(i as i64 + 1)
    )
}

/// REST inserts: one POST per row (Direct), or one `PUT /root/Batch` of SIMPLE rows.
fn rest_insert(addr: SocketAddr, kind: Insert, rows: usize) -> (Duration, Vec<i64>) {
    let mut c = Client::connect(addr);
    let t = Instant::now();
    let ids: Vec<i64> = if kind == Insert::Direct {
        (0..rows)
            .map(|i| {
                let (st, body) = c.call("POST", "/root/Sample", sample_json(i).as_bytes());
                assert_eq!(st, 201);
                let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
                v["id"].as_i64().expect("id")
            })
            .collect()
    } else {
        let mut body = String::with_capacity(rows * 64);
        body.push_str(r#"{"Sample":["#);
        for i in 0..rows {
            if i > 0 {
                body.push(',');
            }
            write!(
                body,
                r#""SIMPLE",[{},"{}",{},"{}",0,0]"#,
                serde_json::to_string(&first_name(i)).expect("json"),
                i + 1,
                (i + 1) as f64 * 0.01,
                iso_date(i as i64 + 1)
            )
            .expect("format");
        }
        body.push_str("]}");
        let (st, out) = c.call("PUT", "/root/Batch", body.as_bytes());
        assert_eq!(st, 200, "{}", String::from_utf8_lossy(&out));
        let v: serde_json::Value = serde_json::from_slice(&out).expect("json");
        v["Sample"]
            .as_array()
            .expect("ids")
            .iter()
            .map(|id| id.as_i64().expect("id"))
            .collect()
    };
    let (st, _) = c.call("GET", &format!("/root/Sample/{}", ids[1]), b"");
    assert_eq!(st, 200);
    (t.elapsed(), ids)
}

/// A JSON object of Sample as the REST layer writes it.
fn check_json(v: &serde_json::Value, i: usize, id: i64, start: i64) {
    let s = Sample {
        id: v["id"].as_i64().expect("id"),
        first_name: v["first_name"].as_str().expect("first").to_owned(),
        amount: v["amount"].as_f64().expect("amount"),
        last_change: ModTime(v["last_change"].as_i64().expect("change")),
        ..Default::default()
    };
    check(&s, i, id, start);
}

fn rest_by_one(addr: SocketAddr, ids: &[i64], start: i64) -> Duration {
    let mut c = Client::connect(addr);
    let t = Instant::now();
    for (i, id) in ids.iter().enumerate() {
        let (st, body) = c.call("GET", &format!("/root/Sample/{id}"), b"");
        assert_eq!(st, 200);
        check_json(&serde_json::from_slice(&body).expect("json"), i, *id, start);
    }
    t.elapsed()
}

/// One compact-JSON GET of every row (mORMot's non-expanded format), parsed and checked.
fn rest_all(addr: SocketAddr, ids: &[i64], start: i64) -> Duration {
    let mut c = Client::connect(addr);
    let t = Instant::now();
    let target = format!("/root/Sample?sort=id&format=compact&limit={}", ids.len());
    let (st, body) = c.call("GET", &target, b"");
    assert_eq!(st, 200);
    let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
    let n = v["fieldCount"].as_u64().expect("fieldCount") as usize;
    let values = v["values"].as_array().expect("values");
    let names = &values[..n];
    let col = |name: &str| names.iter().position(|c| c == name).expect("column");
    let (idc, first, amount, change) = (
        col("id"),
        col("first_name"),
        col("amount"),
        col("last_change"),
    );
    let rows = values[n..].chunks(n);
    assert_eq!(rows.len(), ids.len());
    for (i, r) in rows.enumerate() {
        let s = Sample {
            id: r[idc].as_i64().expect("id"),
            first_name: r[first].as_str().expect("first").to_owned(),
            amount: r[amount].as_f64().expect("amount"),
            last_change: ModTime(r[change].as_i64().expect("change")),
            ..Default::default()
        };
        check(&s, i, ids[i], start);
    }
    t.elapsed()
}

/// REST rows (loopback, keep-alive, one client) for one engine.
fn rest_rows(b: &mut Bench, name: &str, mode: Mode) -> (Line, Line) {
    let mut cols = Vec::new();
    for kind in INSERTS {
        if matches!(kind, Insert::Trans | Insert::BatchTrans) {
            cols.push(0);
            continue;
        }
        cols.push(b.insert_median(mode, kind, |p, rows| {
            let (server, addr) = rest_server(p, mode);
            let (d, ids) = rest_insert(addr, kind, rows);
            server.shutdown();
            server.wait();
            (d, ids.len())
        }));
    }
    let path = b.fresh(mode);
    let (server, addr) = rest_server(&path, mode);
    let start = now_millis();
    let (_, ids) = rest_insert(addr, Insert::Batch, b.args.rows);
    let runs = b.args.runs;
    let med = |f: &dyn Fn() -> Duration| median((0..runs).map(|_| rate(ids.len(), f())).collect());
    let reads = vec![
        med(&|| rest_by_one(addr, &ids, start)),
        med(&|| rest_all(addr, &ids, start)),
    ];
    server.shutdown();
    server.wait();
    let label = format!("{name} (REST)");
    (
        Line {
            label: label.clone(),
            cols,
        },
        Line { label, cols: reads },
    )
}

/// A row of rates: one label, several columns (0 prints as `-`).
struct Line {
    label: String,
    cols: Vec<u64>,
}

fn print_table(title: &str, heads: &[&str], lines: &[Line]) {
    println!("\n{title}");
    print!("{:<36}", "");
    for h in heads {
        print!("{h:>13}");
    }
    println!();
    for l in lines {
        print!("{:<36}", l.label);
        for c in &l.cols {
            match c {
                0 => print!("{:>13}", "-"),
                c => print!("{c:>13}"),
            }
        }
        println!();
    }
}

/// Inserts and reads on the synchronous `Conn` and with raw rusqlite, for one engine.
/// Inserts and reads on the synchronous `Conn` and with raw rusqlite, for one engine. ORM and
/// raw runs alternate, so a busy moment on the shared machine hits both alike.
fn engine_rows(b: &mut Bench, name: &str, mode: Mode, ins: &mut Vec<Line>, reads: &mut Vec<Line>) {
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

/// The same work through the fiber-side `Db`, from a fiber, for one engine and dispatch.
fn db_rows(b: &mut Bench, rt: &Runtime, name: &str, mode: Mode, how: Dispatch) -> (Line, Line) {
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
    let ids: Vec<i64> = match kind {
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
    };
    let one: Sample = db.get(ids[1]).expect("verify");
    check(&one, 1, ids[1], start);
    (t.elapsed(), ids.len())
}

/// Raw rusqlite: `rows` Sample rows in one transaction, `per_stmt` rows per INSERT statement
/// (1 = the cached single-row statement), ids bound explicitly or left to SQLite.
fn shape_insert(rows: usize, per_stmt: usize, bind_ids: bool) -> Duration {
    let c = open(Path::new(""), Mode::Memory);
    let db = c.sqlite().expect("a SQLite connection");
    let cols = if bind_ids {
        "id,first_name,last_name,amount,birth_date,last_change,created_at"
    } else {
        "first_name,last_name,amount,birth_date,last_change,created_at"
    };
    let one = if bind_ids {
        "(?,?,?,?,?,?,?)"
    } else {
        "(?,?,?,?,?,?)"
    };
    let samples: Vec<Sample> = (0..rows).map(sample).collect();
    let sql = |n: usize| {
        format!(
            "INSERT INTO Sample({cols}) VALUES{}",
            vec![one; n].join(",")
        )
    };
    let now = now_millis();
    let t = Instant::now();
    db.execute_batch("BEGIN IMMEDIATE").expect("begin");
    let mut full = db.prepare(&sql(per_stmt)).expect("prepare");
    for (k, chunk) in samples.chunks(per_stmt).enumerate() {
        let mut rest;
        let stmt = if chunk.len() == per_stmt {
            &mut full
        } else {
            rest = db.prepare(&sql(chunk.len())).expect("prepare");
            &mut rest
        };
        let mut p = 1;
        for (j, s) in chunk.iter().enumerate() {
            if bind_ids {
                stmt.raw_bind_parameter(p, (k * per_stmt + j + 1) as i64)
                    .expect("bind");
                p += 1;
            }
            stmt.raw_bind_parameter(p, &s.first_name).expect("bind");
            stmt.raw_bind_parameter(p + 1, &s.last_name).expect("bind");
            stmt.raw_bind_parameter(p + 2, s.amount).expect("bind");
            stmt.raw_bind_parameter(p + 3, &s.birth_date).expect("bind");
            stmt.raw_bind_parameter(p + 4, now).expect("bind");
            stmt.raw_bind_parameter(p + 5, now).expect("bind");
            p += 6;
        }
        stmt.raw_execute().expect("insert");
    }
    drop(full);
    db.execute_batch("COMMIT").expect("commit");
    t.elapsed()
}

fn shapes(args: &Args) {
    let mut lines = Vec::new();
    for bind_ids in [false, true] {
        let mut cols = Vec::new();
        for params in [6, 128, 256, 512, 1024, 4096] {
            let per_stmt = (params / if bind_ids { 7 } else { 6 }).max(1);
            let runs = (0..args.runs)
                .map(|_| rate(args.rows, shape_insert(args.rows, per_stmt, bind_ids)));
            cols.push(median(runs.collect()));
        }
        let label = if bind_ids {
            "ids bound (mORMot)"
        } else {
            "ids left to SQLite"
        };
        lines.push(Line {
            label: label.into(),
            cols,
        });
    }
    print_table(
        "Batch statement shapes, raw rusqlite in memory, one transaction (rows/second)",
        &[
            "1 row",
            "128 params",
            "256 params",
            "512 params",
            "1024 params",
            "4096 params",
        ],
        &lines,
    );
}

/// By-one reads of every id from `fibers` concurrent fibers (each reads all ids, offset so
/// they do not walk in step); rows/s over all fibers.
fn dispatch_by_one(rt: &Runtime, db: &Db, ids: &Arc<Vec<i64>>, fibers: usize) -> u64 {
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

fn dispatch_compare(b: &mut Bench, rt: &Runtime) {
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

/// Round trips between two plain threads: over a std mpsc channel pair and over loopback TCP.
/// Every by-one call that crosses threads (Db lanes, REST) pays at least one of these.
fn baseline(args: &Args) {
    const TRIPS: u32 = 10_000;
    let mut chan = Vec::new();
    let mut tcp = Vec::new();
    for _ in 0..args.runs {
        let (to_tx, to_rx) = std::sync::mpsc::channel::<u64>();
        let (back_tx, back_rx) = std::sync::mpsc::channel::<u64>();
        let echo = std::thread::spawn(move || {
            while let Ok(v) = to_rx.recv() {
                if back_tx.send(v).is_err() {
                    return;
                }
            }
        });
        let t = Instant::now();
        for i in 0..u64::from(TRIPS) {
            to_tx.send(i).expect("send");
            assert_eq!(back_rx.recv().expect("recv"), i);
        }
        chan.push((t.elapsed() / TRIPS).as_nanos() as u64);
        drop(to_tx);
        echo.join().expect("echo");

        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let echo = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().expect("accept");
            s.set_nodelay(true).expect("nodelay");
            let mut b = [0u8; 100];
            while s.read_exact(&mut b).is_ok() {
                s.write_all(&b).expect("echo");
            }
        });
        let mut c = TcpStream::connect(addr).expect("connect");
        c.set_nodelay(true).expect("nodelay");
        let mut b = [1u8; 100];
        let t = Instant::now();
        for _ in 0..TRIPS {
            c.write_all(&b).expect("write");
            c.read_exact(&mut b).expect("read");
        }
        tcp.push((t.elapsed() / TRIPS).as_nanos() as u64);
        drop(c);
        echo.join().expect("echo");
    }
    println!(
        "\nCross-thread round trip, plain std threads (ns, median of {} runs)",
        args.runs
    );
    println!("{:<36}{:>13}", "mpsc channel pair", median(chan));
    println!("{:<36}{:>13}", "loopback TCP, 100 bytes", median(tcp));
}

#[path = "../../peers/tokio_pg.rs"]
mod tokio_pg;

/// Fibers (and tokio tasks) of the concurrent by-one column.
const CONCURRENT: usize = 64;

/// PostgreSQL `Db` inserts; mirrors `db_insert`.
fn pg_db_insert(db: &Db, kind: Insert, rows: usize) -> (Duration, Vec<i64>) {
    let start = now_millis();
    let t = Instant::now();
    let ids: Vec<i64> = match kind {
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
    };
    let d = t.elapsed();
    let one: Sample = db.get(ids[1]).expect("verify");
    check(&one, 1, ids[1], start);
    (d, ids)
}

/// The PostgreSQL `Db` under test: `pool` exclusive and `pipelined` shared connections.
fn pg_db(url: &str, pool: usize, pipelined: usize) -> Db {
    Db::builder(url)
        .pool_options(moria_orm::pg::PoolOptions {
            max_size: pool,
            pipelined,
            ..Default::default()
        })
        .open()
        .expect("open")
}

fn pg_reset(admin: &str) {
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
            let all = tokio_pg::all(&c, ids.len()).await;
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

/// SQLite file (off) read rows with the concurrent column: `Db` per dispatch and raw rusqlite.
fn sqlite_concurrent_rows(b: &mut Bench, rt: &Runtime, reads: &mut Vec<Line>) {
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

fn pg_compare(b: &mut Bench, rt: &Runtime) {
    let server;
    let transports: Vec<(String, String, String)> = match &b.args.pg_url {
        Some(url) => vec![("given".into(), url.clone(), url.clone())],
        None => {
            server = moria_orm::pg::TestServer::start().unwrap_or_else(|e| panic!("{e}"));
            let kv = |host: &str| {
                format!(
                    "host={host} port={} user=moria password={} dbname=postgres sslmode=disable",
                    server.port(),
                    server.password()
                )
            };
            vec![
                (
                    "unix".into(),
                    server.unix_url(),
                    kv(&server.socket_dir().display().to_string()),
                ),
                ("tcp".into(), server.url(), kv("127.0.0.1")),
            ]
        }
    };
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

fn main() {
    let args = Args::parse();
    if args.baseline {
        baseline(&args);
        return;
    }
    if args.shapes {
        shapes(&args);
        return;
    }
    let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let rt = Runtime::builder()
        .workers(args.workers)
        .build()
        .expect("runtime");
    let (no_db, no_rest, only_dispatch) = (args.no_db, args.no_rest, args.dispatch);
    let engines: Vec<_> = ENGINES
        .into_iter()
        .filter(|(key, ..)| args.engines.is_empty() || args.engines.iter().any(|e| e == key))
        .collect();
    let mut b = Bench {
        args,
        dir,
        serial: 0,
    };
    if only_dispatch {
        dispatch_compare(&mut b, &rt);
        cleanup(&b);
        return;
    }
    if b.args.pg {
        pg_compare(&mut b, &rt);
        cleanup(&b);
        return;
    }
    println!(
        "moria-orm extdb-bench: {} rows ({} for Direct on file full), median of {} runs, SQLite {}",
        b.args.rows,
        b.args.full_direct_rows,
        b.args.runs,
        rusqlite::version()
    );
    let mut ins = Vec::new();
    let mut reads = Vec::new();
    for (_, name, mode) in engines {
        engine_rows(&mut b, name, mode, &mut ins, &mut reads);
        if !no_db {
            let dispatches: &[Dispatch] = if mode == Mode::Memory {
                &[Dispatch::Inline, Dispatch::Thread, Dispatch::Offload]
            } else {
                &[Dispatch::Thread, Dispatch::Offload]
            };
            for &how in dispatches {
                let (i, r) = db_rows(&mut b, &rt, name, mode, how);
                ins.push(i);
                reads.push(r);
            }
        }
        if !no_rest {
            let (i, r) = rest_rows(&mut b, name, mode);
            ins.push(i);
            reads.push(r);
        }
    }
    print_table(
        "Insertion speed (rows/second)",
        &["Direct", "Batch", "Trans", "Batch Trans"],
        &ins,
    );
    print_table("Read speed (rows/second)", &["By one", "All"], &reads);
    cleanup(&b);
}

fn cleanup(b: &Bench) {
    for n in 1..=b.serial {
        let p = b.dir.join(format!("orm-bench-{n}.db"));
        for ext in ["", "-wal", "-shm", "-journal"] {
            let _ = std::fs::remove_file(format!("{}{ext}", p.display()));
        }
    }
}
