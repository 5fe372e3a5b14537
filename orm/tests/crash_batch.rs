//! Crash safety: a process killed with SIGKILL in the middle of a large batch leaves all of
//! the batch or none of it, and the database opens cleanly afterwards — a SQLite file in
//! `Mode::Full` (with pages already spilled to the file, so the rollback journal is hot) and
//! PostgreSQL (earlier INSERT statements of the batch already executed on the server).
//!
//! Each test re-runs its own test binary as the child (`MORIA_CRASH_CHILD` names the database).
//! The child sends the batch; binding row [`TRIP`] prints `mid-batch` and parks, and the parent
//! kills the child there.
//!
//! A test binary of its own (not a module of `orm`): the child is this binary re-run, and a
//! process killed on purpose should be a small one that runs nothing else.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use common::TempDir;
use moria_orm::rusqlite::types::{FromSqlResult, ToSqlOutput, ValueRef};
use moria_orm::{model, Batch, Db, Field, FieldType, Mode, Query};

const CHILD_ENV: &str = "MORIA_CRASH_CHILD";
const ROWS: i64 = 20_000;
/// The row whose binding stops the child: after many statements of the batch have run.
const TRIP: i64 = 15_000;
/// Filler per row, so the batch outgrows the child's page cache and spills into the file.
const PAD: usize = 200;

/// An integer column that, in the child, stops the process at [`TRIP`] while it is bound.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tripwire(i64);

impl Field for Tripwire {
    const TYPE: FieldType = FieldType::Integer;
    fn to_sql(&self) -> ToSqlOutput<'_> {
        if self.0 == TRIP && std::env::var_os(CHILD_ENV).is_some() {
            // Straight to the descriptor: `println!` may be captured by the test harness.
            let mut out = std::io::stdout();
            let _ = out.write_all(b"mid-batch\n").and_then(|()| out.flush());
            loop {
                std::thread::park();
            }
        }
        ToSqlOutput::Borrowed(ValueRef::Integer(self.0))
    }
    fn from_sql(value: ValueRef<'_>) -> FromSqlResult<Self> {
        i64::from_sql(value).map(Tripwire)
    }
    fn from_json(value: &serde_json::Value) -> Option<Self> {
        value.as_i64().map(Tripwire)
    }
}

model! {
    /// One row of the batch.
    pub struct Item {
        pub n: Tripwire,
        pub pad: String,
    }
}

fn open(target: &str) -> Db {
    if moria_orm::is_postgres_url(target) {
        Db::open(target).unwrap()
    } else {
        Db::builder(target).mode(Mode::Full).open().unwrap()
    }
}

/// The child's part: a small page cache (SQLite), then the whole batch in one call.
fn child(target: String) {
    common::runtime()
        .run(move || {
            let db = open(&target);
            if db.backend() == moria_orm::Backend::Sqlite {
                db.run(|c| Ok(c.sqlite().unwrap().pragma_update(None, "cache_size", 64)?))
                    .unwrap();
            }
            let mut batch = Batch::with_capacity(ROWS as usize);
            for n in 1..=ROWS {
                batch.add(Item {
                    n: Tripwire(n),
                    pad: "x".repeat(PAD),
                    ..Default::default()
                });
            }
            db.batch_send(batch).unwrap();
        })
        .unwrap();
}

/// Runs `test` of this binary as the child on `target`, kills it with SIGKILL mid-batch.
fn kill_child_mid_batch(test: &str, target: &str) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, target)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let tripped = stdout
        .lines()
        .map_while(Result::ok)
        .any(|l| l.ends_with("mid-batch"));
    if !tripped {
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        panic!(
            "the child ended before the tripwire: {:?}\n{err}",
            child.wait()
        );
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
}

/// The database opens, holds the row written before the batch and either none or all of the
/// batch, and takes a new write.
fn all_or_nothing(target: &str) {
    let target = target.to_owned();
    common::runtime()
        .run(move || {
            let db = open(&target);
            let count = db.count::<Item>(Query::new()).unwrap();
            // The child died before its commit: none of the batch may be there.
            assert_eq!(
                count, 1,
                "{count} rows: part of the batch survived the crash"
            );
            let first: Item = db.get(1).unwrap();
            assert_eq!(first.n, Tripwire(0));
            db.add(Item {
                n: Tripwire(-1),
                ..Default::default()
            })
            .unwrap();
            assert_eq!(db.count::<Item>(Query::new()).unwrap(), 2);
        })
        .unwrap();
}

/// Creates the table with one row in it.
fn prepare(target: &str) {
    let target = target.to_owned();
    common::runtime()
        .run(move || {
            let db = open(&target);
            db.ensure_schema::<Item>().unwrap();
            db.add(Item::default()).unwrap();
        })
        .unwrap();
}

#[test]
fn sqlite_full_mode_batch_killed_mid_way() {
    if let Ok(target) = std::env::var(CHILD_ENV) {
        return child(target);
    }
    let dir = TempDir::new("crash");
    let path = dir.file("crash.db");
    let target = path.to_str().unwrap();
    prepare(target);
    kill_child_mid_batch("sqlite_full_mode_batch_killed_mid_way", target);
    let journal = dir.file("crash.db-journal");
    let hot = std::fs::metadata(&journal).map(|m| m.len()).unwrap_or(0);
    assert!(
        hot > 0,
        "the kill left a hot rollback journal ({hot} bytes)"
    );
    all_or_nothing(target);
    let check: String = moria_orm::rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

#[test]
fn postgres_batch_killed_mid_way() {
    if let Ok(target) = std::env::var(CHILD_ENV) {
        return child(target);
    }
    let url = common::pg_url();
    prepare(&url);
    kill_child_mid_batch("postgres_batch_killed_mid_way", &url);
    all_or_nothing(&url);
}
