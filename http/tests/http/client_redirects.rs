//! Redirects: 301/302/303 become a GET without body, 307/308 repeat method and body, relative
//! locations, the hop limit, loops, and credentials (Authorization, Cookie) dropped when the
//! origin changes.

use std::io::Read;

use crate::common::*;
use moria_http::client::{Client, Error};
use moria_http::{HandlerResult, Request, Response, Server};

fn handler(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let path = req.path().to_owned();
    if let Some(code) = path.strip_prefix("/code/") {
        let code: u16 = code.parse()?;
        res.status(code).header("Location", "/target").body("moved");
    } else if path == "/target" {
        let mut body = String::new();
        req.body().read_to_string(&mut body)?;
        let auth = req.header_str("authorization").unwrap_or("-");
        let ctype = req.header_str("content-type").unwrap_or("-");
        res.body(format!("{} {body} {auth} {ctype}", req.method_str()));
    } else if path == "/credentials" {
        // Every Authorization and Cookie field that arrived, so a test sees duplicates too.
        let all = |name| -> Vec<String> {
            req.headers_named(name)
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .collect()
        };
        let (auth, cookie) = (all("authorization"), all("cookie"));
        res.body(format!("authorization={auth:?} cookie={cookie:?}"));
    } else if path == "/relative/a/b" {
        res.status(302).header("Location", "../c?x=1");
    } else if path == "/loop-a" {
        res.status(302).header("Location", "/loop-b");
    } else if path == "/loop-b" {
        res.status(302).header("Location", "/loop-a");
    } else if let Some(n) = path.strip_prefix("/chain/") {
        let n: u32 = n.parse()?;
        res.status(302)
            .header("Location", format!("/chain/{}", n + 1));
    } else if let Some(to) = req.query_param("to") {
        res.status(307).header("Location", to.as_ref());
    } else {
        res.body(format!("{} {}", req.method_str(), req.target()));
    }
    Ok(())
}

fn serve() -> Server {
    start(Server::builder(), handler)
}

#[test]
fn see_other_family_becomes_get_without_body() {
    let server = serve();
    let client = Client::new().unwrap();
    for code in [301, 302, 303] {
        let r = client
            .post(&url(&server, &format!("/code/{code}")))
            .header("Content-Type", "text/plain")
            .body("payload")
            .send()
            .unwrap();
        assert_eq!(r.status(), 200);
        assert!(r.url().to_string().ends_with("/target"));
        assert_eq!(r.text().unwrap(), "GET  - -", "{code}");
    }
    stop(&server);
}

#[test]
fn temporary_and_permanent_redirects_keep_method_and_body() {
    let server = serve();
    let client = Client::new().unwrap();
    for code in [307, 308] {
        let r = client
            .post(&url(&server, &format!("/code/{code}")))
            .header("Content-Type", "text/plain")
            .body("payload")
            .send()
            .unwrap();
        assert_eq!(r.text().unwrap(), "POST payload - text/plain", "{code}");
    }
    // A streamed body cannot be sent twice: the redirect itself is the answer.
    let r = client
        .put(&url(&server, "/code/307"))
        .body_reader(std::io::Cursor::new(b"once".to_vec()), Some(4))
        .send()
        .unwrap();
    assert_eq!(r.status(), 307);
    stop(&server);
}

#[test]
fn relative_locations_resolve_against_the_request() {
    let server = serve();
    let client = Client::new().unwrap();
    let r = client.get(&url(&server, "/relative/a/b")).send().unwrap();
    assert_eq!(r.text().unwrap(), "GET /relative/c?x=1");
    stop(&server);
}

#[test]
fn loops_and_long_chains_are_errors() {
    let server = serve();
    let client = Client::new().unwrap();
    let err = client.get(&url(&server, "/loop-a")).send().unwrap_err();
    assert!(matches!(err, Error::RedirectLoop { .. }), "{err}");
    let err = client.get(&url(&server, "/chain/0")).send().unwrap_err();
    assert!(
        matches!(err, Error::TooManyRedirects { limit: 10, .. }),
        "{err}"
    );
    let short = Client::builder().max_redirects(3).build().unwrap();
    let err = short.get(&url(&server, "/chain/0")).send().unwrap_err();
    assert!(
        matches!(err, Error::TooManyRedirects { limit: 3, .. }),
        "{err}"
    );
    let none = Client::builder().max_redirects(0).build().unwrap();
    let r = none.get(&url(&server, "/code/302")).send().unwrap();
    assert_eq!(r.status(), 302);
    assert_eq!(r.headers().get("location"), Some("/target"));
    stop(&server);
}

#[test]
fn authorization_is_dropped_when_the_origin_changes() {
    let first = serve();
    let second = serve();
    let client = Client::new().unwrap();
    let same = url(&first, "/hop?to=/target");
    let r = client
        .get(&same)
        .header("Authorization", "Bearer s3cret")
        .send()
        .unwrap();
    assert_eq!(r.text().unwrap(), "GET  Bearer s3cret -");
    let other = url(&first, &format!("/hop?to={}", url(&second, "/target")));
    let r = client
        .get(&other)
        .header("Authorization", "Bearer s3cret")
        .send()
        .unwrap();
    assert_eq!(r.text().unwrap(), "GET  - -");
    stop(&first);
    stop(&second);
}

#[test]
fn cookie_is_kept_on_the_same_origin_and_dropped_when_it_changes() {
    let first = serve();
    let second = serve();
    let client = Client::new().unwrap();
    let send = |from: &str| {
        client
            .get(from)
            .header("Cookie", "session=s3cret")
            .header("Authorization", "Bearer s3cret")
            .send()
            .unwrap()
    };
    // Same origin: the redirect is followed and both fields arrive at the target, once each.
    let r = send(&url(&first, "/hop?to=/credentials"));
    assert_eq!(r.url().to_string(), url(&first, "/credentials"));
    assert_eq!(
        r.text().unwrap(),
        r#"authorization=["Bearer s3cret"] cookie=["session=s3cret"]"#
    );
    // Another origin (same host, another port): the target sees neither field.
    let target = url(&second, "/credentials");
    let r = send(&url(&first, &format!("/hop?to={target}")));
    assert_eq!(r.url().to_string(), target);
    assert_eq!(r.text().unwrap(), "authorization=[] cookie=[]");
    stop(&first);
    stop(&second);
}
