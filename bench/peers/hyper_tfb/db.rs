//! The peer's database side: one tokio-postgres connection per worker with its statements
//! prepared once; the N queries of a request run concurrently, so tokio-postgres pipelines
//! them on the connection.

use futures_util::future::try_join_all;
use serde::Serialize;
use tokio_postgres::{Client, NoTls, Statement};

/// One World row.
#[derive(Clone, Copy, Serialize)]
pub struct World {
    id: i32,
    #[serde(rename = "randomNumber")]
    random_number: i32,
}

/// A worker's connection and prepared statements.
pub struct Db {
    client: Client,
    world: Statement,
    fortunes: Statement,
    update: Statement,
}

const SELECT_WORLD: &str = "SELECT id, randomNumber FROM World WHERE id = $1";
const SELECT_ALL: &str = "SELECT id, randomNumber FROM World";
const SELECT_FORTUNES: &str = "SELECT id, message FROM Fortune";
const UPDATE_WORLDS: &str = "UPDATE World SET randomNumber = u.n \
     FROM (SELECT unnest($1::int[]) AS id, unnest($2::int[]) AS n) AS u WHERE World.id = u.id";

async fn connect(url: &str) -> Result<Client, tokio_postgres::Error> {
    let (client, conn) = tokio_postgres::connect(url, NoTls).await?;
    tokio::task::spawn_local(async move {
        let _ = conn.await;
    });
    Ok(client)
}

/// Every World row sorted by id, for `/cached-queries` (read once at start).
pub fn load_cache(url: &str) -> Result<Vec<World>, Box<dyn std::error::Error>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        let c = connect(url).await?;
        let mut all: Vec<World> = c
            .query(SELECT_ALL, &[])
            .await?
            .iter()
            .map(|r| World {
                id: r.get(0),
                random_number: r.get(1),
            })
            .collect();
        all.sort_unstable_by_key(|w| w.id);
        if all.len() != 10_000 || all.iter().enumerate().any(|(i, w)| w.id != i as i32 + 1) {
            return Err("World must hold ids 1..=10000: run techempower --init".into());
        }
        Ok(all)
    })
}

impl Db {
    /// Connects and prepares the statements.
    pub async fn connect(url: &str) -> Result<Db, tokio_postgres::Error> {
        let client = connect(url).await?;
        Ok(Db {
            world: client.prepare(SELECT_WORLD).await?,
            fortunes: client.prepare(SELECT_FORTUNES).await?,
            update: client.prepare(UPDATE_WORLDS).await?,
            client,
        })
    }

    /// The World row `id`.
    pub async fn world(&self, id: i32) -> Result<World, tokio_postgres::Error> {
        let r = self.client.query_one(&self.world, &[&id]).await?;
        Ok(World {
            id: r.get(0),
            random_number: r.get(1),
        })
    }

    /// `n` random rows, queried concurrently.
    pub async fn worlds(&self, n: usize) -> Result<Vec<World>, tokio_postgres::Error> {
        try_join_all((0..n).map(|_| self.world(super::random_id()))).await
    }

    /// `n` random rows, each given a new number, written back in one statement.
    pub async fn updates(&self, n: usize) -> Result<Vec<World>, tokio_postgres::Error> {
        let mut rows = self.worlds(n).await?;
        let mut by_id = std::collections::BTreeMap::new();
        for w in rows.iter_mut() {
            let old = w.random_number;
            w.random_number = *by_id.entry(w.id).or_insert_with(|| loop {
                let n = super::random_id();
                if n != old {
                    break n;
                }
            });
        }
        let ids: Vec<i32> = by_id.keys().copied().collect();
        let numbers: Vec<i32> = by_id.values().copied().collect();
        self.client.execute(&self.update, &[&ids, &numbers]).await?;
        Ok(rows)
    }

    /// The fortunes page: every row plus the request-time one, sorted, escaped.
    pub async fn fortunes_page(&self) -> Result<String, tokio_postgres::Error> {
        let mut rows: Vec<(i32, String)> = self
            .client
            .query(&self.fortunes, &[])
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        rows.push((0, "Additional fortune added at request time.".into()));
        rows.sort_unstable_by(|a, b| a.1.cmp(&b.1));
        let mut out = String::with_capacity(1500);
        out.push_str(
            "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>\
             <tr><th>id</th><th>message</th></tr>",
        );
        for (id, message) in &rows {
            out.push_str("<tr><td>");
            out.push_str(&id.to_string());
            out.push_str("</td><td>");
            moria_http::html::escape_into(message, &mut out);
            out.push_str("</td></tr>");
        }
        out.push_str("</table></body></html>");
        Ok(out)
    }
}
