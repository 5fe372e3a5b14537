//! Shared by the integration tests (the `orm` binary and the two that need a process of their
//! own): models, a temporary directory, the runtime, the test PostgreSQL and the engine switch.
// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use moria_orm::pg::TestServer;
use moria_orm::{model, CreateTime, ModTime};
use moria_runtime::Runtime;

model! {
    /// One field of every supported type.
    pub struct Every {
        pub i: i64,
        pub small: i32,
        pub f: f64,
        pub b: bool,
        pub s: String,
        pub bytes: Vec<u8>,
        pub maybe_i: Option<i64>,
        pub maybe_s: Option<String>,
        pub created: CreateTime,
        pub changed: ModTime,
    }
}

model! {
    /// A unique name, an indexed city.
    pub struct Person {
        pub name: String [unique],
        pub city: String [index],
        pub age: i64,
    }
}

impl Person {
    pub fn new(name: &str, city: &str, age: i64) -> Self {
        Person {
            name: name.into(),
            city: city.into(),
            age,
            ..Default::default()
        }
    }
}

/// The runtime the tests run on: two workers, configured once for the process. The engine
/// reads its configuration once, and anything that starts it first (a socket, a fiber) applies
/// the default one, so every helper here that can start the engine calls this first.
pub fn runtime() -> Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| Runtime::builder().workers(2).build().unwrap())
        .clone()
}

/// The shared test PostgreSQL, with the runtime configured first.
pub fn pg_server() -> &'static TestServer {
    runtime();
    TestServer::shared()
}

/// A directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("moria-orm-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One HTTP/1.1 exchange through moria-http's client (no redirects followed, no decoding);
/// returns status, the head as text (status line and fields) and the body. The client's read
/// timeout turns a hung server into a failure.
pub fn http(
    addr: std::net::SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    use moria_http::client::Client;
    runtime();
    let client = Client::builder()
        .max_redirects(0)
        .decompress(false)
        .read_timeout(std::time::Duration::from_secs(20))
        .build()
        .unwrap();
    let mut req = client.request(method, &format!("http://{addr}{target}"));
    for (k, v) in headers {
        req = req.header(k, v);
    }
    if !body.is_empty() {
        req = req.body(body.to_vec());
    }
    let res = req.send().unwrap();
    let mut head = format!("HTTP/1.1 {} {}\r\n", res.status(), res.reason());
    for (name, value) in res.headers().iter() {
        head.push_str(&format!("{name}: {}\r\n", String::from_utf8_lossy(value)));
    }
    let status = res.status();
    (status, head, res.bytes().unwrap())
}

/// The engine a test body runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// Runs each named `fn(Engine)` as two tests, `name::sqlite` and `name::postgres`: one test
/// body, two backends.
#[macro_export]
macro_rules! both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn sqlite() {
                super::$name($crate::common::Engine::Sqlite)
            }
            #[test]
            fn postgres() {
                super::$name($crate::common::Engine::Postgres)
            }
        }
    )*};
}

/// A URL for the shared test PostgreSQL whose `search_path` is a fresh, empty schema: each
/// test gets its own tables.
pub fn pg_url() -> String {
    use moria_orm::pg::Client;
    static N: AtomicUsize = AtomicUsize::new(0);
    let srv = pg_server();
    let schema = format!(
        "t{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let mut admin = Client::connect(&srv.url()).unwrap();
    admin
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .unwrap();
    format!("{}&options=-c%20search_path%3D{schema}", srv.url())
}

/// A fresh connection: SQLite in memory, or PostgreSQL in a fresh schema.
pub fn conn(kind: Engine) -> moria_orm::Conn {
    runtime();
    match kind {
        Engine::Sqlite => moria_orm::Conn::open(":memory:", moria_orm::Mode::Memory).unwrap(),
        Engine::Postgres => moria_orm::Conn::connect(&pg_url()).unwrap(),
    }
}

/// A fresh database: SQLite in memory, or PostgreSQL in a fresh schema.
pub fn db(kind: Engine) -> moria_orm::Db {
    runtime();
    match kind {
        Engine::Sqlite => moria_orm::Db::open(":memory:").unwrap(),
        Engine::Postgres => moria_orm::Db::open(pg_url()).unwrap(),
    }
}
