//! appserver: a small REST application on moria-orm, driven with curl.
//!
//! ```text
//! cargo run --release -p moria-examples --bin appserver -- --listen 127.0.0.1:8080
//! curl -s -X POST localhost:8080/api/Task -d '{"title":"write tests","priority":2}'
//! curl -s 'localhost:8080/api/Task?where=done=false&sort=-priority'
//! curl -s -X PUT localhost:8080/api/Task/1 -d '{"done":true}'
//! curl -s -X PUT localhost:8080/api/Batch -d '{"Task":["POST",{"title":"a"},"POST",{"title":"b"}]}'
//! curl -s -X DELETE localhost:8080/api/Task/1
//! curl -s localhost:8080/api/Task/1        # {"errorCode":404,...}
//! ```
//!
//! `--db postgres://user:pass@host:5432/db` runs the same application on PostgreSQL (tables are
//! created on start; `--pool-size` connections shared by every request).
//!
//! `--metrics 127.0.0.1:9090` serves `/metrics` (Prometheus), `/healthz` and `/readyz` (503
//! while shutting down or when the database does not answer) on a separate listener.
//!
//! Flags have `MORIA_*` environment twins. With `--user`/`--password` every request needs HTTP
//! Basic credentials (`curl -u user:password`); with `--jwt-secret` a Bearer HS256 token instead.
//! Both are moria-http layers on the router, as are the request ids (`X-Request-Id`) and, with
//! `--cors-origin`, CORS; their errors use the REST handler's format.

use clap::{Parser, ValueEnum};
use moria_crypto::jwt::{JwtKey, Validation};
use moria_http::health::Readiness;
use moria_http::layer::{BasicAuth, BearerAuth, Cors, RequestId};
use moria_http::{Router, Server};
use moria_orm::rest::mormot_error;
use moria_orm::{model, CreateTime, Db, ModTime, Mode, Rest};
use moria_runtime::shutdown;

model! {
    /// Something to do.
    pub struct Task {
        pub title: String [unique],
        pub done: bool [index],
        pub priority: i64 [index],
        pub notes: Option<String>,
        pub created: CreateTime,
        pub changed: ModTime,
    }
}

model! {
    /// A label attached to tasks by id.
    pub struct Tag {
        pub task: i64 [index],
        pub label: String [index],
    }
}

/// Reader connections beside the writer when `--readers` is not given.
const DEFAULT_READERS: usize = 4;

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ModeArg {
    Full,
    Off,
    Exclusive,
    Memory,
}

#[derive(Parser, Debug)]
#[command(about = "REST application on moria-orm")]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "MORIA_LISTEN", default_value = "127.0.0.1:8080")]
    listen: String,
    /// Serve HTTP/1.1 only (no h2c by the HTTP/2 preface).
    #[arg(long, env = "MORIA_NO_H2")]
    no_h2: bool,
    /// Database: a SQLite file (ignored with --mode memory) or a `postgres://user:pass@host/db`
    /// URL.
    #[arg(long, env = "MORIA_DB", default_value = "appserver.db")]
    db: String,
    /// PostgreSQL connections in the pool (with `--db postgres://…`).
    #[arg(long, env = "MORIA_DB_POOL", default_value_t = 16)]
    pool_size: usize,
    /// SQLite durability: full, off, exclusive or memory.
    #[arg(long, env = "MORIA_DB_MODE", value_enum, default_value = "full")]
    mode: ModeArg,
    /// SQLite (modes full and off): use the write-ahead log with this many reader connections,
    /// so reads never queue behind a write's fsync (0: rollback journal, reads wait for writes).
    #[arg(long, env = "MORIA_DB_READERS", default_value_t = DEFAULT_READERS)]
    readers: usize,
    /// URL root of the REST API.
    #[arg(long, env = "MORIA_API_ROOT", default_value = "api")]
    root: String,
    /// Require HTTP Basic with this user (needs --password).
    #[arg(long, env = "MORIA_USER", requires = "password")]
    user: Option<String>,
    /// Password for --user.
    #[arg(long, env = "MORIA_PASSWORD", requires = "user")]
    password: Option<String>,
    /// Require a Bearer JWT signed with this HS256 secret (at least 32 bytes).
    #[arg(long, env = "MORIA_JWT_SECRET", conflicts_with = "user")]
    jwt_secret: Option<String>,
    /// Serve /metrics (Prometheus), /healthz and /readyz (the database answers) on this
    /// separate address.
    #[arg(long, env = "MORIA_METRICS")]
    metrics: Option<String>,
    /// Allow cross-origin requests from this origin (e.g. `https://ui.example`).
    #[arg(long, env = "MORIA_CORS_ORIGIN")]
    cors_origin: Option<String>,
}

/// Opens the database the flags describe: WAL with readers for the SQLite file modes that
/// allow them (an exclusive or memory database has one connection).
fn open_db(args: &Args) -> moria_orm::Result<Db> {
    if moria_orm::is_postgres_url(&args.db) {
        // PostgreSQL: the SQLite flags (mode, readers) do not apply; the pool does.
        return Db::builder(&args.db).pool_size(args.pool_size).open();
    }
    let (mode, readers) = match args.mode {
        ModeArg::Full => (Mode::Full, args.readers),
        ModeArg::Off => (Mode::Off, args.readers),
        ModeArg::Exclusive => (Mode::OffExclusive, 0),
        ModeArg::Memory => (Mode::Memory, 0),
    };
    Db::builder(&args.db)
        .mode(mode)
        .wal(readers > 0)
        .readers(readers)
        .open()
}

/// The application: the REST routes, errors in the REST format, and the layers the flags ask
/// for; with the body limit the server must enforce.
fn app(args: &Args, db: Db) -> Result<(Router, u64), Box<dyn std::error::Error>> {
    db.ensure_schema::<Task>()?;
    db.ensure_schema::<Tag>()?;
    let rest = Rest::new(db, &args.root).table::<Task>().table::<Tag>();
    let body_limit = rest.body_limit() as u64;
    let mut router = rest
        .routes(Router::new())
        .error_renderer(mormot_error)
        .layer(RequestId::new());
    if let Some(origin) = &args.cors_origin {
        let methods = ["GET", "POST", "PUT", "DELETE"];
        router = router.layer(Cors::new().allow_origin(origin).allow_methods(&methods));
    }
    if let (Some(user), Some(password)) = (&args.user, &args.password) {
        router = router.layer(BasicAuth::new("appserver").user(user, password));
    } else if let Some(secret) = &args.jwt_secret {
        let key = JwtKey::hs256(secret.as_bytes())?;
        router = router.layer(BearerAuth::new(key, Validation::new()));
    }
    Ok((router, body_limit))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    moria_examples::init_logging("info")?;
    let args = Args::parse();
    let db = open_db(&args)?;
    log::info!("database: {:?}", db.backend());
    let probe = db.clone();
    let (router, body_limit) = app(&args, db)?;

    shutdown::listen_for_signals()?;
    let server = Server::builder()
        .listen(args.listen.as_str())
        .max_body(body_limit)
        .h2(!args.no_h2)
        .shutdown_token(shutdown::global().clone())
        .start(router)?;
    let metrics = match &args.metrics {
        Some(addr) => {
            let token = shutdown::global().clone();
            let ready = Readiness::new(token.clone()).check("database", move || {
                probe
                    .read(|c| c.execute_batch("SELECT 1"))
                    .map_err(|e| e.to_string())
            });
            let m = moria_examples::metrics_listener(addr, token, ready)?;
            log::info!("metrics on http://{}/metrics", m.local_addr());
            Some(m)
        }
        None => None,
    };
    log::info!(
        "try: curl -s -X POST http://{}/{}/Task -d '{{\"title\":\"hello\"}}'",
        server.local_addr(),
        args.root
    );
    server.wait();
    if let Some(m) = &metrics {
        m.wait();
    }
    log::logger().flush();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default file database runs WAL with readers, so reads do not queue behind fsyncs.
    #[test]
    fn the_default_database_is_wal_with_readers() {
        let dir = std::env::temp_dir().join(format!("moria-appserver-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("app.db");
        let args = Args::parse_from(["appserver", "--db", path.to_str().unwrap()]);
        let db = open_db(&args).unwrap();
        let journal: String = db
            .run(|c| {
                let lite = c.sqlite().expect("a SQLite database");
                Ok(lite.pragma_query_value(None, "journal_mode", |r| r.get(0))?)
            })
            .unwrap();
        assert_eq!(journal, "wal");
        assert_eq!(format!("{db:?}"), "Db { readers: true }");
        for mode in ["exclusive", "memory"] {
            let path = dir.join(format!("{mode}.db"));
            let args =
                Args::parse_from(["appserver", "--db", path.to_str().unwrap(), "--mode", mode]);
            assert!(open_db(&args).is_ok(), "{mode}");
        }
        drop(db);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The whole application in-process: REST round trip, auth and CORS layers, errors in
    /// the REST format.
    #[test]
    fn the_application_in_process() {
        use moria_http::testing::TestRequest;
        let args = Args::parse_from([
            "appserver",
            "--mode",
            "memory",
            "--user",
            "ada",
            "--password",
            "pw",
            "--cors-origin",
            "https://ui.example",
        ]);
        let (app, _) = app(&args, open_db(&args).unwrap()).unwrap();
        let ada = "Basic YWRhOnB3";
        let res = TestRequest::post("/api/Task")
            .header("Authorization", ada)
            .body(r#"{"title":"write tests","priority":2}"#)
            .send(&app);
        assert_eq!(res.status(), 201, "{}", res.text());
        assert!(res.header("x-request-id").is_some());
        let res = TestRequest::get("/api/Task/1")
            .header("Authorization", ada)
            .send(&app);
        let task: serde_json::Value = res.json().unwrap();
        assert_eq!(task["title"], "write tests");
        let res = TestRequest::get("/api/Task/1").send(&app);
        assert_eq!(res.status(), 401);
        let error: serde_json::Value = res.json().unwrap();
        assert_eq!(error["errorCode"], 401);
        let res = TestRequest::new("OPTIONS", "/api/Task")
            .header("Origin", "https://ui.example")
            .header("Access-Control-Request-Method", "PUT")
            .send(&app);
        assert_eq!(res.status(), 204);
    }
}
