//! Peer for the compare bench: the seven TechEmpower test types on hyper + tokio +
//! tokio-postgres, built the way TFB's Rust entries are: one current-thread tokio runtime per
//! worker thread, each with its own PostgreSQL connection (concurrent queries pipelined on it),
//! all accepting from one listening socket. Same URLs, bodies and database as
//! `examples/techempower` (run `techempower --db URL --init` first). Never part of the library.
//!
//! `cargo run --release -p moria-bench --bin peer_hyper_tfb -- --db postgres://… --listen 127.0.0.1:8082 [--workers N]`

mod db;

use std::convert::Infallible;
use std::net::TcpListener as StdListener;
use std::rc::Rc;
use std::sync::Arc;

use bytes::Bytes;
use clap::Parser;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE, SERVER};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::Serialize;

use db::{Db, World};

/// Command-line flags.
#[derive(Parser)]
#[command(about = "hyper + tokio-postgres TechEmpower peer")]
struct Args {
    /// PostgreSQL URL of a database filled by `techempower --init`.
    #[arg(long, env = "MORIA_DB")]
    db: String,
    /// Address to listen on.
    #[arg(long, env = "MORIA_LISTEN", default_value = "127.0.0.1:8082")]
    listen: String,
    /// Worker threads (default: one per CPU).
    #[arg(long, env = "MORIA_WORKERS")]
    workers: Option<usize>,
}

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

type Reply = Response<Full<Bytes>>;

fn reply(content_type: &'static str, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Full::new(body.into()));
    let h = r.headers_mut();
    h.insert(SERVER, HeaderValue::from_static("hyper"));
    h.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

fn json(value: &impl Serialize) -> Reply {
    match serde_json::to_vec(value) {
        Ok(v) => reply("application/json", v),
        Err(_) => failed(),
    }
}

fn failed() -> Reply {
    let mut r = reply("text/plain", "500 Internal Server Error\n");
    *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    r
}

/// TFB's rule: missing or not an integer → 1, then clamped to 1..=500.
fn count(req: &Request<Incoming>, name: &str) -> usize {
    let raw = req.uri().query().unwrap_or("").split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == name).then_some(v)
    });
    raw.and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(1)
        .clamp(1, 500) as usize
}

fn random_id() -> i32 {
    fastrand::i32(1..=10_000)
}

async fn route(req: Request<Incoming>, db: Rc<Db>, cache: Arc<Vec<World>>) -> Reply {
    let db = &*db;
    match req.uri().path() {
        "/plaintext" => reply("text/plain", "Hello, World!"),
        "/json" => json(&Message {
            message: "Hello, World!",
        }),
        "/db" => match db.world(random_id()).await {
            Ok(w) => json(&w),
            Err(_) => failed(),
        },
        "/queries" => match db.worlds(count(&req, "queries")).await {
            Ok(ws) => json(&ws),
            Err(_) => failed(),
        },
        "/cached-queries" => {
            let n = count(&req, "count");
            let ws: Vec<World> = (0..n).map(|_| cache[(random_id() - 1) as usize]).collect();
            json(&ws)
        }
        "/updates" => match db.updates(count(&req, "queries")).await {
            Ok(ws) => json(&ws),
            Err(_) => failed(),
        },
        "/fortunes" => match db.fortunes_page().await {
            Ok(page) => reply("text/html; charset=utf-8", page),
            Err(_) => failed(),
        },
        _ => {
            let mut r = reply("text/plain", "404 Not Found\n");
            *r.status_mut() = StatusCode::NOT_FOUND;
            r
        }
    }
}

/// One worker: a current-thread runtime, one database connection, connections accepted from
/// the shared listener.
fn worker(listener: StdListener, url: String, cache: Arc<Vec<World>>) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        let db = Rc::new(Db::connect(&url).await.map_err(std::io::Error::other)?);
        let listener = tokio::net::TcpListener::from_std(listener)?;
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            let (db, cache) = (db.clone(), cache.clone());
            tokio::task::spawn_local(async move {
                let service = service_fn(move |req| {
                    let (db, cache) = (db.clone(), cache.clone());
                    async move { Ok::<_, Infallible>(route(req, db, cache).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .pipeline_flush(true)
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let workers = args
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let cache = Arc::new(db::load_cache(&args.db)?);
    let listener = StdListener::bind(&args.listen)?;
    listener.set_nonblocking(true)?;
    eprintln!(
        "peer_hyper_tfb: listening on http://{} ({workers} workers)",
        listener.local_addr()?
    );
    let mut threads = Vec::new();
    for _ in 0..workers {
        let (l, url, cache) = (listener.try_clone()?, args.db.clone(), cache.clone());
        threads.push(std::thread::spawn(move || worker(l, url, cache)));
    }
    for t in threads {
        t.join().map_err(|_| "worker panicked")??;
    }
    Ok(())
}
