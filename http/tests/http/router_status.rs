//! Routing over raw TCP: parameters, rest segments, most-specific match, automatic 404,
//! 405 with `Allow`, HEAD through GET routes, OPTIONS with `Allow`, and decoded paths.

use crate::common::*;
use moria_http::{HandlerResult, Method, Request, Response, Router, Server};

fn named(
    name: &'static str,
) -> impl Fn(&mut Request<'_>, &mut Response) -> HandlerResult + Send + Sync + 'static {
    move |req: &mut Request<'_>, res: &mut Response| -> HandlerResult {
        let params: Vec<String> = req.params().map(|(k, v)| format!("{k}={v}")).collect();
        res.body(format!("{name} {}", params.join(",")));
        Ok(())
    }
}

fn router() -> Router {
    Router::new()
        .get("/", named("root"))
        .get("/users/:id", named("user"))
        .get("/users/me", named("me"))
        .post("/users/:id", named("update"))
        .get("/users/:id/posts/:post", named("post"))
        .get("/static/*rest", named("static"))
        .route_other("PURGE", "/cache", named("purge"))
}

fn get(server: &Server, raw: &str) -> Resp {
    exchange(server.local_addr(), raw.as_bytes())
}

#[test]
fn params_and_specificity() {
    let server = start(Server::builder(), router());
    assert_eq!(
        get(&server, "GET / HTTP/1.1\r\nHost: a\r\n\r\n").text(),
        "root "
    );
    assert_eq!(
        get(&server, "GET /users/42 HTTP/1.1\r\nHost: a\r\n\r\n").text(),
        "user id=42"
    );
    assert_eq!(
        get(&server, "GET /users/me HTTP/1.1\r\nHost: a\r\n\r\n").text(),
        "me "
    );
    assert_eq!(
        get(&server, "POST /users/7 HTTP/1.1\r\nHost: a\r\n\r\n").text(),
        "update id=7"
    );
    assert_eq!(
        get(&server, "GET /users/1/posts/2 HTTP/1.1\r\nHost: a\r\n\r\n").text(),
        "post id=1,post=2"
    );
    assert_eq!(
        get(&server, "GET /static/css/a.css HTTP/1.1\r\nHost: a\r\n\r\n").text(),
        "static rest=css/a.css"
    );
    assert_eq!(
        get(&server, "PURGE /cache HTTP/1.1\r\nHost: a\r\n\r\n").text(),
        "purge "
    );
    stop(&server);
}

#[test]
fn params_are_percent_decoded_once() {
    let server = start(Server::builder(), router());
    assert_eq!(
        get(&server, "GET /users/a%20b%2525 HTTP/1.1\r\nHost: a\r\n\r\n").text(),
        "user id=a b%25"
    );
    stop(&server);
}

#[test]
fn unknown_path_is_404() {
    let server = start(Server::builder(), router());
    let r = get(&server, "GET /nope HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(r.status, 404);
    assert_eq!(r.text(), "404 Not Found\n");
    let r = get(&server, "GET /users/1/2 HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(r.status, 404);
    stop(&server);
}

#[test]
fn wrong_method_is_405_with_allow() {
    let server = start(Server::builder(), router());
    let r = get(&server, "DELETE /users/5 HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD, POST, OPTIONS"));
    // The connection stays usable after a 405.
    assert!(r.header("connection").is_none());
    stop(&server);
}

#[test]
fn head_uses_the_get_route() {
    let server = start(Server::builder(), router());
    let mut s = connect(server.local_addr());
    std::io::Write::write_all(&mut s, b"HEAD /users/9 HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let r = read_response(&mut s, true).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-length"), Some("9"));
    stop(&server);
}

#[test]
fn options_lists_allowed_methods() {
    let server = start(Server::builder(), router());
    let r = get(&server, "OPTIONS /users/3 HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(r.status, 204);
    assert_eq!(r.header("allow"), Some("GET, HEAD, POST, OPTIONS"));
    stop(&server);
}

#[test]
fn fallback_replaces_404() {
    let server = start(
        Server::builder(),
        Router::new()
            .route(Method::Get, "/a", named("a"))
            .fallback(named("fallback")),
    );
    assert_eq!(
        get(&server, "GET /zzz HTTP/1.1\r\nHost: a\r\n\r\n").text(),
        "fallback "
    );
    stop(&server);
}
