//! Peer for the orm bench's PostgreSQL rows: tokio-postgres on a current-thread runtime,
//! running the same statements as moria-orm (single-row INSERTs, multi-row INSERT … RETURNING
//! in the same chunk size, SELECT by id, SELECT all). Every SELECT is prepared once and run
//! as Bind/Execute/Sync with binary results, as moria-orm runs its cached statements.

use std::time::{Duration, Instant};

use tokio_postgres::{Client, NoTls, Statement};

pub const INSERT: &str = "INSERT INTO \"Sample\"(\"first_name\",\"last_name\",\"amount\",\"birth_date\",\"last_change\",\"created_at\") VALUES($1,$2,$3,$4,$5,$6) RETURNING \"id\"";
pub const SELECT: &str = "SELECT \"id\",\"first_name\",\"last_name\",\"amount\",\"birth_date\",\"last_change\",\"created_at\" FROM \"Sample\" WHERE \"id\"=$1";
pub const SELECT_ALL: &str = "SELECT \"id\",\"first_name\",\"last_name\",\"amount\",\"birth_date\",\"last_change\",\"created_at\" FROM \"Sample\"";

/// One row's values: first name, last name, amount, birth date, timestamps.
pub type RowValues = (String, String, f64, String, i64);

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

pub async fn connect(params: &str) -> Client {
    let (client, conn) = tokio_postgres::connect(params, NoTls)
        .await
        .expect("tokio-postgres connect");
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

fn multi_insert(rows: usize) -> String {
    let mut sql = String::from("INSERT INTO \"Sample\"(\"first_name\",\"last_name\",\"amount\",\"birth_date\",\"last_change\",\"created_at\") VALUES");
    for r in 0..rows {
        if r > 0 {
            sql.push(',');
        }
        let b = r * 6;
        sql.push_str(&format!(
            "(${},${},${},${},${},${})",
            b + 1,
            b + 2,
            b + 3,
            b + 4,
            b + 5,
            b + 6
        ));
    }
    sql.push_str(" RETURNING \"id\"");
    sql
}

/// Inserts `rows` rows; `batch`: multi-row statements of `per_stmt` rows; `trans`: inside one
/// transaction. Returns the time and the ids.
pub async fn insert(
    client: &Client,
    values: &[RowValues],
    batch: bool,
    trans: bool,
    per_stmt: usize,
) -> (Duration, Vec<i64>) {
    let t = Instant::now();
    let mut ids = Vec::with_capacity(values.len());
    // The ORM's batch is all-or-nothing: one transaction, like Trans.
    let tx = trans || batch;
    if tx {
        client.batch_execute("BEGIN").await.expect("begin");
    }
    if batch {
        for chunk in values.chunks(per_stmt) {
            let stmt = client
                .prepare(&multi_insert(chunk.len()))
                .await
                .expect("prepare");
            let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = Vec::new();
            for v in chunk {
                params.extend([
                    &v.0 as &(dyn tokio_postgres::types::ToSql + Sync),
                    &v.1,
                    &v.2,
                    &v.3,
                    &v.4,
                    &v.4,
                ]);
            }
            for r in client.query(&stmt, &params).await.expect("batch") {
                ids.push(r.get(0));
            }
        }
    } else {
        let stmt = client.prepare(INSERT).await.expect("prepare");
        for v in values {
            let r = client
                .query_one(&stmt, &[&v.0, &v.1, &v.2, &v.3, &v.4, &v.4])
                .await
                .expect("insert");
            ids.push(r.get(0));
        }
    }
    if tx {
        client.batch_execute("COMMIT").await.expect("commit");
    }
    (t.elapsed(), ids)
}

pub async fn by_one(c: &Client, ids: &[i64]) -> Duration {
    let stmt = c.prepare(SELECT).await.expect("prepare");
    let t = Instant::now();
    for id in ids {
        let r = c.query_one(&stmt, &[id]).await.expect("select");
        let got: i64 = r.get(0);
        assert_eq!(got, *id);
        let _: String = r.get(1);
    }
    t.elapsed()
}

/// One `Sample` row as a tokio-postgres user reads it into a struct: every column, the
/// same shape as moria-orm's `Sample` model.
#[derive(Debug, Default)]
pub struct SampleRow {
    pub id: i64,
    pub first_name: String,
    pub last_name: String,
    pub amount: f64,
    pub birth_date: String,
    pub last_change: i64,
    pub created_at: i64,
}

/// The "All" statement, prepared once per connection (as moria-orm caches its statements).
pub async fn prepare_all(c: &Client) -> Statement {
    c.prepare(SELECT_ALL).await.expect("prepare select all")
}

/// Every row into a `Vec<SampleRow>` (what `Db::list` returns): the time, excluding the drop.
pub async fn all(c: &Client, stmt: &Statement, n: usize) -> Duration {
    let t = Instant::now();
    let rows = c.query(stmt, &[]).await.expect("select all");
    let all: Vec<SampleRow> = rows
        .iter()
        .map(|r| SampleRow {
            id: r.get(0),
            first_name: r.get(1),
            last_name: r.get(2),
            amount: r.get(3),
            birth_date: r.get(4),
            last_change: r.get(5),
            created_at: r.get(6),
        })
        .collect();
    let t = t.elapsed();
    assert_eq!(all.len(), n);
    let r = &all[0];
    assert!(r.id > 0 && !r.first_name.is_empty() && !r.last_name.is_empty() && r.amount > 0.0);
    assert!(!r.birth_date.is_empty() && r.last_change > 0 && r.created_at > 0);
    t
}

/// Every row as a `Vec<Row>`, three columns read from each (id, first name, amount).
pub async fn all_columns(c: &Client, stmt: &Statement, n: usize) -> Duration {
    let t = Instant::now();
    let rows = c.query(stmt, &[]).await.expect("select all");
    for r in &rows {
        let _: i64 = r.get(0);
        let _: String = r.get(1);
        let _: f64 = r.get(3);
    }
    assert_eq!(rows.len(), n);
    t.elapsed()
}

/// The process id of the server backend serving `c`.
pub async fn backend_pid(c: &Client) -> i32 {
    c.query_one("SELECT pg_backend_pid()", &[])
        .await
        .expect("backend pid")
        .get(0)
}

/// `tasks` tasks over `clients` connections, each reading every id once by id.
pub async fn by_one_concurrent(clients: &[Client], ids: &[i64], tasks: usize) -> Duration {
    let t = Instant::now();
    let stmts = {
        let mut v = Vec::new();
        for c in clients {
            v.push(c.prepare(SELECT).await.expect("prepare"));
        }
        v
    };
    let n = ids.len();
    let futures = (0..tasks).map(|f| {
        let c = &clients[f % clients.len()];
        let stmt = &stmts[f % clients.len()];
        async move {
            for k in 0..n {
                let id = ids[(k + f * n / tasks) % n];
                let r = c.query_one(stmt, &[&id]).await.expect("select");
                let got: i64 = r.get(0);
                assert_eq!(got, id);
            }
        }
    });
    futures_join(futures).await;
    t.elapsed()
}

/// Runs every future to completion concurrently on the current task.
async fn futures_join<F: std::future::Future<Output = ()>>(futures: impl Iterator<Item = F>) {
    let local = tokio::task::LocalSet::new();
    let mut futs: Vec<std::pin::Pin<Box<F>>> = futures.map(Box::pin).collect();
    local
        .run_until(async move {
            std::future::poll_fn(move |cx| {
                futs.retain_mut(|f| f.as_mut().poll(cx).is_pending());
                if futs.is_empty() {
                    std::task::Poll::Ready(())
                } else {
                    std::task::Poll::Pending
                }
            })
            .await
        })
        .await;
}
