//! REST over real HTTP: a moria-http server on 127.0.0.1:0 with `Rest::routes`, raw TCP
//! clients (and curl when installed).

use std::net::SocketAddr;

use crate::common::{self, http, Engine, Person, TempDir};
use moria_http::layer::BasicAuth;
use moria_http::{Router, Server};
use moria_orm::{Db, Query, Rest};
use serde_json::{json, Value};

fn serve(rest: Rest) -> (Server, SocketAddr) {
    serve_router(rest.routes(Router::new()))
}

fn serve_router(router: Router) -> (Server, SocketAddr) {
    common::runtime();
    let server = Server::builder()
        .listen("127.0.0.1:0")
        .max_body(4 << 20)
        .start(router)
        .unwrap();
    let addr = server.local_addr();
    (server, addr)
}

fn people(db: &Db) -> Rest {
    db.ensure_schema::<Person>().unwrap();
    Rest::new(db.clone(), "root").table::<Person>()
}

fn body_json(b: &[u8]) -> Value {
    serde_json::from_slice(b).unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(b)))
}

fn round_trip_on_a_file_database(kind: Engine) {
    let dir = TempDir::new("rest-http");
    let db = match kind {
        Engine::Sqlite => Db::open(dir.file("rest.db")).unwrap(),
        Engine::Postgres => common::db(kind),
    };
    let (server, addr) = serve(people(&db));

    let (st, head, body) = http(
        addr,
        "POST",
        "/root/Person",
        &[],
        br#"{"name":"Ada","age":36}"#,
    );
    assert_eq!(st, 201, "{head}");
    assert!(head.contains("Location: /root/Person/1"), "{head}");
    assert!(head
        .to_ascii_lowercase()
        .contains("content-type: application/json"));
    assert_eq!(body_json(&body), json!({"id":1}));

    let (st, _, body) = http(addr, "GET", "/root/Person/1", &[], b"");
    assert_eq!(st, 200);
    assert_eq!(
        body_json(&body),
        json!({"id":1,"name":"Ada","city":"","age":36})
    );

    let (st, _, body) = http(addr, "PUT", "/root/Person/1", &[], br#"{"city":"London"}"#);
    assert_eq!(st, 200);
    assert_eq!(body_json(&body)["city"], json!("London"));

    let batch =
        json!({"Person": ["POST", {"name":"Bob"}, "SIMPLE", ["Cy", "Oslo", 3]]}).to_string();
    let (st, _, body) = http(addr, "PUT", "/root/Batch", &[], batch.as_bytes());
    assert_eq!(st, 200);
    assert_eq!(body_json(&body), json!({"Person":[2,3]}));

    let (st, _, body) = http(
        addr,
        "GET",
        "/root/Person?where=age%3C10&sort=-name&select=name",
        &[],
        b"",
    );
    assert_eq!(st, 200);
    assert_eq!(body_json(&body), json!([{"name":"Cy"},{"name":"Bob"}]));

    let (st, _, body) = http(addr, "DELETE", "/root/Person/2", &[], b"");
    assert_eq!((st, body.len()), (204, 0));
    let (st, _, body) = http(addr, "GET", "/root/Person/2", &[], b"");
    assert_eq!(st, 404);
    assert_eq!(body_json(&body)["errorCode"], json!(404));
    server.shutdown();
    server.wait();
}

fn errors_and_limits_over_http(kind: Engine) {
    let db = common::db(kind);
    let (server, addr) = serve(people(&db).max_body(1024));
    http(addr, "POST", "/root/Person", &[], br#"{"name":"Ada"}"#);
    for (method, target, body, status) in [
        ("POST", "/root/Person", &br#"{"name":"Ada"}"#[..], 409),
        ("POST", "/root/Person", b"{oops", 400),
        ("POST", "/root/Person", br#"{"admin":true}"#, 400),
        ("GET", "/root/Ghost/1", b"", 404),
        ("GET", "/root/Person?bogus=1", b"", 400),
        ("PATCH", "/root/Person/1", b"", 405),
        (
            "PUT",
            "/root/Batch",
            br#"{"Person":["POST",{"name":"x"},"POST",{"name":"Ada"}]}"#,
            409,
        ),
    ] {
        let (st, head, body) = http(addr, method, target, &[], body);
        assert_eq!(
            st,
            status,
            "{method} {target}: {head}\n{}",
            String::from_utf8_lossy(&body)
        );
    }
    let big = vec![b' '; 2048];
    let (st, _, body) = http(addr, "POST", "/root/Person", &[], &big);
    assert_eq!(st, 413);
    assert_eq!(body_json(&body)["errorCode"], json!(413));
    assert_eq!(
        db.count::<Person>(Query::new()).unwrap(),
        1,
        "no failed request wrote"
    );
    server.shutdown();
    server.wait();
}

fn injection_attempts_over_http_change_nothing(kind: Engine) {
    let db = common::db(kind);
    let (server, addr) = serve(people(&db));
    http(
        addr,
        "POST",
        "/root/Person",
        &[],
        br#"{"name":"victim","age":1}"#,
    );
    for target in [
        "/root/Person?where=name=%27%20OR%201=1--",
        "/root/Person?where=age=1%3BDROP%20TABLE%20Person",
        "/root/Person?sort=age%3BDROP%20TABLE%20Person",
        "/root/Person?select=name%2Csql",
        "/root/Person?limit=1%20UNION%20SELECT%201",
        "/root/Person/1%20OR%201=1",
        "/root/Person%3BDELETE%20FROM%20Person/1",
        "/root/Person?where=name~%25%27%20OR%20%27%25",
    ] {
        let (st, _, body) = http(addr, "GET", target, &[], b"");
        assert!(
            st == 400 || st == 404 || (st == 200 && body_json(&body) == json!([])),
            "{target}: {st} {}",
            String::from_utf8_lossy(&body)
        );
    }
    let (st, _, body) = http(addr, "DELETE", "/root/Person/1%20OR%201=1", &[], b"");
    assert_eq!(st, 400, "{}", String::from_utf8_lossy(&body));
    assert_eq!(db.count::<Person>(Query::new()).unwrap(), 1);
    assert_eq!(db.get::<Person>(1).unwrap().name, "victim");
    server.shutdown();
    server.wait();
}

fn basic_auth_over_http_and_curl(kind: Engine) {
    let db = common::db(kind);
    let auth = BasicAuth::new("moria").user("ada", "pw");
    let router = people(&db)
        .routes(Router::new())
        .layer(auth)
        .error_renderer(moria_orm::rest::mormot_error);
    let (server, addr) = serve_router(router);
    let (st, head, body) = http(addr, "GET", "/root/Person", &[], b"");
    assert_eq!(st, 401);
    assert!(
        head.contains("WWW-Authenticate: Basic realm=\"moria\""),
        "{head}"
    );
    assert_eq!(body_json(&body)["errorCode"], json!(401));
    let (st, _, _) = http(
        addr,
        "POST",
        "/root/Person",
        &[("Authorization", "Basic YWRhOnB3")],
        br#"{"name":"x"}"#,
    );
    assert_eq!(st, 201);
    let (st, _, _) = http(
        addr,
        "POST",
        "/root/Person",
        &[("Authorization", "Basic YWRhOng=")],
        br#"{"name":"y"}"#,
    );
    assert_eq!(st, 401);

    if let Ok(out) = std::process::Command::new("curl")
        .args([
            "-s",
            "-u",
            "ada:pw",
            &format!("http://{addr}/root/Person/1"),
        ])
        .output()
    {
        assert_eq!(body_json(&out.stdout)["name"], json!("x"), "curl");
    }
    assert_eq!(db.count::<Person>(Query::new()).unwrap(), 1);
    server.shutdown();
    server.wait();
}

fn jwt_bearer_over_http(kind: Engine) {
    use moria_crypto::jwt::{JwtKey, Validation};
    use moria_http::layer::BearerAuth;
    let key = JwtKey::es256_generate().unwrap();
    let verifier = JwtKey::es256_public_pem(&key.public_key_pem().unwrap()).unwrap();
    let db = common::db(kind);
    let auth = BearerAuth::new(verifier, Validation::new().audience("app"));
    let (server, addr) = serve_router(people(&db).routes(Router::new()).layer(auth));
    let exp = moria_orm::now_millis() / 1000 + 600;
    let good = key.sign(&json!({"aud":"app","exp":exp})).unwrap();
    let wrong_aud = key.sign(&json!({"aud":"other","exp":exp})).unwrap();
    let bearer = |t: &str| format!("Bearer {t}");
    let (st, _, _) = http(
        addr,
        "POST",
        "/root/Person",
        &[("Authorization", &bearer(&good))],
        br#"{"name":"x"}"#,
    );
    assert_eq!(st, 201);
    for bad in [bearer(&wrong_aud), bearer("x.y.z"), "Basic YWRhOnB3".into()] {
        let (st, head, _) = http(
            addr,
            "DELETE",
            "/root/Person/1",
            &[("Authorization", &bad)],
            b"",
        );
        assert_eq!(st, 401, "{bad}");
        assert!(head.contains("WWW-Authenticate: Bearer"), "{head}");
    }
    assert_eq!(db.count::<Person>(Query::new()).unwrap(), 1);
    server.shutdown();
    server.wait();
}

both!(
    round_trip_on_a_file_database,
    errors_and_limits_over_http,
    injection_attempts_over_http_change_nothing,
    basic_auth_over_http_and_curl,
    jwt_bearer_over_http,
);

/// Another process's connection holds the SQLite file locked: writes and reads fail with
/// `SQLITE_BUSY` after the busy timeout and are answered 503 (try again), not 500; once the
/// lock is gone the same requests succeed.
#[test]
fn a_locked_sqlite_database_answers_503() {
    let dir = TempDir::new("rest-busy");
    let path = dir.file("busy.db");
    let db = Db::builder(&path)
        .busy_timeout(std::time::Duration::from_millis(20))
        .open()
        .unwrap();
    let (server, addr) = serve(people(&db));
    let other = moria_orm::rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let post = |name: &str| {
        let body = format!(r#"{{"name":"{name}","age":1}}"#);
        http(addr, "POST", "/root/Person", &[], body.as_bytes())
    };
    let (st, head, body) = post("locked out");
    assert_eq!(st, 503, "{head}\n{}", String::from_utf8_lossy(&body));
    assert!(head.contains("Retry-After: 1"), "{head}");
    let (st, head, _) = http(addr, "GET", "/root/Person", &[], b"");
    assert_eq!(st, 503, "{head}");
    other.execute_batch("ROLLBACK").unwrap();
    assert_eq!(post("let in").0, 201);
    assert_eq!(db.count::<Person>(Query::new()).unwrap(), 1);
    server.shutdown();
    server.wait();
}
