//! The techempower example against SQLite and a throwaway PostgreSQL: every endpoint's headers
//! and body by TFB's rules — clamping of odd `queries`/`count` values, fortunes escaped and
//! sorted, `/updates` really written to the database — and clear failures on a bad database.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::OnceLock;

use crate::common::{run_to_end, start, Conn, Reply};
use moria_orm::pg::{Client, TestServer};
use moria_runtime::Runtime;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_techempower");

/// TFB's expected `/fortunes` page, byte for byte: its twelve fortunes as TechEmpower's own
/// database scripts store them, the request-time one, sorted and escaped.
const FORTUNES: &str = "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr><tr><td>11</td><td>&lt;script&gt;alert(&quot;This should not be displayed in a browser alert box.&quot;);&lt;/script&gt;</td></tr><tr><td>4</td><td>A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1</td></tr><tr><td>5</td><td>A computer program does what you tell it to do, not what you want it to do.</td></tr><tr><td>2</td><td>A computer scientist is someone who fixes things that aren&#39;t broken.</td></tr><tr><td>8</td><td>A list is only as strong as its weakest link. — Donald Knuth</td></tr><tr><td>0</td><td>Additional fortune added at request time.</td></tr><tr><td>3</td><td>After enough decimal places, nobody gives a damn.</td></tr><tr><td>7</td><td>Any program that runs right is obsolete.</td></tr><tr><td>10</td><td>Computers make very fast, very accurate mistakes.</td></tr><tr><td>6</td><td>Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen</td></tr><tr><td>9</td><td>Feature: A bug with seniority.</td></tr><tr><td>1</td><td>fortune: No such file or directory</td></tr><tr><td>12</td><td>フレームワークのベンチマーク</td></tr></table></body></html>";

/// Odd `queries`/`count` values (already percent-encoded) and the row count TFB expects.
const COUNTS: &[(&str, usize)] = &[
    ("", 1),
    ("=", 1),
    ("=foo", 1),
    ("=0", 1),
    ("=-7", 1),
    ("=1", 1),
    ("=3.5", 1),
    ("=%20", 1),
    ("=12", 12),
    ("=+4", 4),
    ("=500", 500),
    ("=501", 500),
    ("=99999999999999999999999", 500),
];

/// Every row of World as read straight from the database: id → randomNumber.
type Table = HashMap<i32, i32>;

/// Checks what TFB checks on every answer: 200, one Server, a Date, the exact Content-Type.
fn checked(r: Reply, content_type: &str) -> Reply {
    assert_eq!(r.status, 200, "{r:?}");
    assert!(!r.one("server").is_empty());
    let date = r.one("date");
    assert!(date.len() == 29 && date.ends_with(" GMT"), "Date: {date}");
    assert_eq!(r.one("content-type"), content_type);
    assert_eq!(r.one("content-length"), r.body.len().to_string());
    r
}

fn json(r: Reply) -> Value {
    let r = checked(r, "application/json");
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("{e}: {}", r.text()))
}

/// `{"id":..,"randomNumber":..}` with both in 1..=10000 and nothing else.
fn world(v: &Value) -> (i32, i32) {
    let o = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"));
    assert_eq!(o.len(), 2, "{v}");
    let get = |k: &str| o[k].as_i64().unwrap_or_else(|| panic!("{k} in {v}")) as i32;
    let (id, n) = (get("id"), get("randomNumber"));
    assert!(
        (1..=10_000).contains(&id) && (1..=10_000).contains(&n),
        "{v}"
    );
    (id, n)
}

fn worlds(v: Value, n: usize) -> Vec<(i32, i32)> {
    let a = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    assert_eq!(a.len(), n, "{v}");
    a.iter().map(world).collect()
}

/// Every endpoint, in an order that keeps `/updates` last.
fn check_all(addr: SocketAddr, table: &dyn Fn() -> Table) {
    let mut c = Conn::open(addr);
    let r = checked(c.get("/plaintext"), "text/plain");
    assert_eq!(r.text(), "Hello, World!");
    let v = json(c.get("/json"));
    assert_eq!(v, serde_json::json!({"message": "Hello, World!"}));
    assert_eq!(
        json(c.get("/json")).to_string(),
        r#"{"message":"Hello, World!"}"#
    );

    let before = table();
    assert_eq!(before.len(), 10_000);
    for _ in 0..20 {
        let (id, n) = world(&json(c.get("/db")));
        assert_eq!(before[&id], n);
    }
    for (q, n) in COUNTS {
        for (id, v) in worlds(json(c.get(&format!("/queries?queries{q}"))), *n) {
            assert_eq!(before[&id], v, "/queries?queries{q}");
        }
        for (id, v) in worlds(json(c.get(&format!("/cached-queries?count{q}"))), *n) {
            assert_eq!(before[&id], v, "/cached-queries?count{q}");
        }
    }
    assert_eq!(worlds(json(c.get("/queries")), 1).len(), 1);
    assert_eq!(worlds(json(c.get("/cached-queries")), 1).len(), 1);

    let r = checked(c.get("/fortunes"), "text/html; charset=utf-8");
    assert_eq!(r.text(), FORTUNES);

    for (q, n) in [("=20", 20), ("=foo", 1), ("=0", 1), ("=501", 500)] {
        let before = table();
        let answered = worlds(json(c.get(&format!("/updates?queries{q}"))), n);
        let after = table();
        for (id, v) in &answered {
            assert_ne!(before[id], *v, "/updates{q}: id {id} kept its number");
            assert_eq!(after[id], *v, "/updates{q}: id {id} not written");
        }
        let changed = before.iter().filter(|(id, v)| after[id] != **v).count();
        let distinct: std::collections::HashSet<_> = answered.iter().map(|w| w.0).collect();
        assert_eq!(changed, distinct.len(), "/updates{q} changed other rows");
    }
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn sqlite_table(path: &std::path::Path) -> Table {
    let c = moria_orm::rusqlite::Connection::open(path).unwrap();
    let mut s = c.prepare("SELECT id, randomNumber FROM World").unwrap();
    let rows = s.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn sqlite_file_answers_every_endpoint_by_the_rules() {
    let dir = tempdir();
    let path = dir.path().join("tfb.db");
    let db = path.to_str().unwrap();
    // --init through the environment twins.
    let (status, log) = run_to_end(BIN, &[], &[("MORIA_DB", db), ("MORIA_INIT", "true")]);
    assert!(status.success(), "{log}");
    let app = start(
        BIN,
        &["--db", db, "--listen", "127.0.0.1:0", "--workers", "2"],
        &[],
    );
    check_all(app.addr, &|| sqlite_table(&path));
}

#[test]
fn sqlite_memory_is_filled_at_start() {
    let app = start(
        BIN,
        &[],
        &[("MORIA_DB", ":memory:"), ("MORIA_LISTEN", "127.0.0.1:0")],
    );
    let mut c = Conn::open(app.addr);
    world(&json(c.get("/db")));
    assert_eq!(worlds(json(c.get("/updates?queries=3")), 3).len(), 3);
    assert_eq!(
        checked(c.get("/fortunes"), "text/html; charset=utf-8").text(),
        FORTUNES
    );
}

/// Runs `f` in a fiber (the PostgreSQL client is fiber I/O).
fn fiber<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    static RT: OnceLock<Runtime> = OnceLock::new();
    let rt = RT.get_or_init(|| Runtime::builder().workers(2).build().expect("runtime"));
    rt.run(f).expect("fiber")
}

fn pg_table(url: String) -> Table {
    fiber(move || {
        let mut c = Client::connect(&url).unwrap();
        let rows = c.query("SELECT id, randomNumber FROM World", &[]).unwrap();
        rows.iter()
            .map(|r| (r.get(0).unwrap(), r.get(1).unwrap()))
            .collect()
    })
}

#[test]
fn postgres_answers_every_endpoint_by_the_rules() {
    let url = TestServer::shared().url();
    let (status, log) = run_to_end(BIN, &["--db", &url, "--init"], &[]);
    assert!(status.success(), "{log}");
    let app = start(
        BIN,
        &["--db", &url, "--listen", "127.0.0.1:0", "--workers", "2"],
        &[("MORIA_DB_POOL", "3")],
    );
    check_all(app.addr, &|| pg_table(url.clone()));
}

#[test]
fn bad_databases_fail_clearly() {
    let dir = tempdir();
    let empty = dir.path().join("empty.db");
    let args = ["--db", empty.to_str().unwrap(), "--listen", "127.0.0.1:0"];
    let (status, log) = run_to_end(BIN, &args, &[]);
    assert!(!status.success(), "{log}");
    assert!(log.contains("World") && !log.contains("panicked"), "{log}");

    // Nothing listens on port 1 of loopback.
    let url = "postgres://nobody:x@127.0.0.1:1/nothing?sslmode=disable";
    let (status, log) = run_to_end(BIN, &["--db", url, "--init"], &[]);
    assert!(!status.success(), "{log}");
    assert!(log.contains("ERROR") && !log.contains("panicked"), "{log}");
}
