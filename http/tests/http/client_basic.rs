//! The client against our own server on loopback: methods, query, headers, bodies of every
//! kind both ways, JSON, HEAD and bodyless statuses, chunked and gzip responses, keep-alive
//! reuse counted on the server, and 1,000 fibers sharing one client.

use std::io::Read;

use crate::common::*;
use moria_http::client::{Client, Error};
use moria_http::compress::Compression;
use moria_http::{Body, HandlerResult, Request, Response, Server};

fn handler(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    match req.path() {
        "/hello" => {
            res.header("X-Served", "yes").body("hello");
        }
        "/echo" => {
            let mut body = Vec::new();
            req.body().read_to_end(&mut body)?;
            let framing = match (
                req.header_str("content-length"),
                req.header("transfer-encoding"),
            ) {
                (Some(n), None) => format!("length {n}"),
                (None, Some(_)) => "chunked".to_owned(),
                (None, None) => "none".to_owned(),
                _ => "both".to_owned(),
            };
            let line = format!(
                "{} {} {} [{}] {}",
                req.method_str(),
                req.target(),
                framing,
                req.header_str("x-test").unwrap_or("-"),
                req.header_str("content-type").unwrap_or("-"),
            );
            res.header("X-Request", line).body(body);
        }
        "/json" => {
            res.content_type("application/json")
                .body(r#"{"name":"moria","n":3}"#);
        }
        "/stream" => {
            res.body(Body::stream(|w| {
                for i in 0..1000 {
                    writeln!(w, "line {i}")?;
                }
                Ok(())
            }));
        }
        "/text" => {
            res.content_type("text/plain")
                .body("compress me please ".repeat(2000));
        }
        "/204" => {
            res.status(204);
        }
        "/304" => {
            res.status(304);
        }
        _ => {
            res.status(404).body("nope");
        }
    }
    Ok(())
}

fn serve() -> Server {
    start(
        Server::builder().compression(Some(Compression::default())),
        handler,
    )
}

#[test]
fn get_gives_status_headers_and_text() {
    let server = serve();
    let client = Client::new().unwrap();
    let r = client.get(&url(&server, "/hello")).send().unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.reason(), "OK");
    assert!(r.is_success());
    assert_eq!(r.headers().get("x-served"), Some("yes"));
    assert_eq!(r.text().unwrap(), "hello");
    let r = client.get(&url(&server, "/missing")).send().unwrap();
    assert_eq!((r.status(), r.text().unwrap().as_str()), (404, "nope"));
    stop(&server);
}

#[test]
fn query_headers_and_bodies_go_out_as_declared() {
    let server = serve();
    let client = Client::new().unwrap();
    let echo = url(&server, "/echo");

    let r = client
        .get(&echo)
        .query("q", "a b&c")
        .header("X-Test", "t1")
        .send()
        .unwrap();
    assert_eq!(
        r.headers().get("x-request"),
        Some("GET /echo?q=a%20b%26c none [t1] -")
    );

    let r = client.post(&echo).body("payload").send().unwrap();
    assert_eq!(
        r.headers().get("x-request"),
        Some("POST /echo length 7 [-] -")
    );
    assert_eq!(r.text().unwrap(), "payload");

    let r = client.post(&echo).send().unwrap();
    assert_eq!(
        r.headers().get("x-request"),
        Some("POST /echo length 0 [-] -")
    );

    let big = vec![b'k'; 300_000];
    let r = client
        .put(&echo)
        .body_reader(std::io::Cursor::new(big.clone()), Some(300_000))
        .send()
        .unwrap();
    assert_eq!(
        r.headers().get("x-request"),
        Some("PUT /echo length 300000 [-] -")
    );
    assert_eq!(r.bytes().unwrap(), big);

    let r = client
        .post(&echo)
        .body_reader(std::io::Cursor::new(big.clone()), None)
        .send()
        .unwrap();
    assert_eq!(
        r.headers().get("x-request"),
        Some("POST /echo chunked [-] -")
    );
    assert_eq!(r.bytes().unwrap(), big);

    let r = client
        .post(&echo)
        .json(&serde_json::json!({"k": [1, 2]}))
        .send()
        .unwrap();
    assert_eq!(
        r.headers().get("x-request"),
        Some("POST /echo length 11 [-] application/json")
    );
    assert_eq!(r.text().unwrap(), r#"{"k":[1,2]}"#);
    stop(&server);
}

#[test]
fn a_short_reader_body_is_a_request_body_error() {
    let server = serve();
    let client = Client::new().unwrap();
    let err = client
        .post(&url(&server, "/echo"))
        .body_reader(std::io::Cursor::new(vec![1u8; 10]), Some(20))
        .send()
        .unwrap_err();
    assert!(matches!(err, Error::RequestBody { .. }), "{err}");
    stop(&server);
}

#[test]
fn json_responses_parse_into_types() {
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Thing {
        name: String,
        n: u32,
    }
    let server = serve();
    let client = Client::new().unwrap();
    let thing: Thing = client
        .get(&url(&server, "/json"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(
        thing,
        Thing {
            name: "moria".into(),
            n: 3
        }
    );
    let err = client
        .get(&url(&server, "/hello"))
        .send()
        .unwrap()
        .json::<Thing>()
        .unwrap_err();
    assert!(matches!(err, Error::Decode { .. }), "{err}");
    stop(&server);
}

#[test]
fn head_and_bodyless_statuses_have_no_body_and_keep_the_connection() {
    let server = serve();
    let client = Client::new().unwrap();
    let r = client.head(&url(&server, "/text")).send().unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers().get("content-length").is_some());
    assert_eq!(r.bytes().unwrap(), b"");
    for (path, status) in [("/204", 204), ("/304", 304)] {
        let r = client.get(&url(&server, path)).send().unwrap();
        assert_eq!(r.status(), status);
        assert_eq!(r.bytes().unwrap(), b"");
    }
    assert_eq!(
        client
            .get(&url(&server, "/hello"))
            .send()
            .unwrap()
            .text()
            .unwrap(),
        "hello"
    );
    assert_eq!(server.stats().accepted, 1);
    stop(&server);
}

#[test]
fn chunked_and_gzip_responses_are_decoded() {
    let server = serve();
    let client = Client::new().unwrap();
    let text = client
        .get(&url(&server, "/stream"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let want: String = (0..1000).map(|i| format!("line {i}\n")).collect();
    assert_eq!(text, want);

    // Decoded: the headers describe what the caller reads.
    let r = client.get(&url(&server, "/text")).send().unwrap();
    assert_eq!(r.headers().get("content-encoding"), None);
    assert_eq!(r.headers().get("content-length"), None);
    assert_eq!(r.text().unwrap(), "compress me please ".repeat(2000));

    let plain = Client::builder().decompress(false).build().unwrap();
    let r = plain.get(&url(&server, "/text")).send().unwrap();
    assert_eq!(r.headers().get("content-encoding"), None);
    assert_eq!(r.text().unwrap(), "compress me please ".repeat(2000));

    let r = client
        .get(&url(&server, "/text"))
        .header("Accept-Encoding", "gzip")
        .send()
        .unwrap();
    assert_eq!(r.headers().get("content-encoding"), Some("gzip"));
    let raw = r.bytes().unwrap();
    assert_eq!(
        &raw[..2],
        b"\x1f\x8b",
        "asked for gzip by hand: left encoded"
    );
    stop(&server);
}

#[test]
fn buffered_bodies_are_capped() {
    let server = serve();
    let client = Client::builder().max_body_size(100).build().unwrap();
    let err = client
        .get(&url(&server, "/stream"))
        .send()
        .unwrap()
        .text()
        .unwrap_err();
    assert!(
        matches!(err, Error::BodyTooLarge { limit: 100, .. }),
        "{err}"
    );
    let mut r = client.get(&url(&server, "/stream")).send().unwrap();
    let mut all = Vec::new();
    r.read_to_end(&mut all).unwrap();
    assert!(all.len() > 100, "the Read side is not capped");
    stop(&server);
}

#[test]
fn keep_alive_reuses_one_connection() {
    let server = serve();
    let client = Client::new().unwrap();
    for i in 0..200 {
        let path = if i % 2 == 0 { "/hello" } else { "/stream" };
        let r = client.get(&url(&server, path)).send().unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().unwrap();
    }
    assert_eq!(server.stats().accepted, 1);
    stop(&server);
}

#[test]
fn a_thousand_fibers_share_one_client() {
    let server = serve();
    // Idle room for every open connection: none is ever closed, so the server sees at most
    // the cap.
    let cap = 64;
    let client = Client::builder()
        .pool_max_open_per_host(cap)
        .pool_max_idle_per_host(cap)
        .build()
        .unwrap();
    let target = url(&server, "/hello");
    let handles: Vec<_> = (0..1000)
        .map(|_| {
            let client = client.clone();
            let target = target.clone();
            moria_runtime::spawn(move || {
                for _ in 0..3 {
                    let text = client.get(&target).send()?.text()?;
                    assert_eq!(text, "hello");
                }
                Ok::<(), Error>(())
            })
        })
        .collect();
    for h in handles {
        h.join()
            .expect("fiber finished")
            .expect("requests succeeded");
    }
    let accepted = server.stats().accepted;
    assert!(accepted <= cap as u64, "{accepted} connections");
    stop(&server);
}

#[test]
fn bad_urls_and_headers_fail_before_any_connection() {
    let client = Client::new().unwrap();
    for bad in ["ftp://x/", "http://", "not a url", "http://h:0/"] {
        let err = client.get(bad).send().unwrap_err();
        assert!(matches!(err, Error::InvalidUrl { .. }), "{bad}: {err}");
    }
    for (name, value) in [
        ("Bad Name", "v"),
        ("X", "a\r\nInjected: 1"),
        ("Content-Length", "3"),
        ("Transfer-Encoding", "chunked"),
    ] {
        let err = client
            .get("http://127.0.0.1:9/")
            .header(name, value)
            .send()
            .unwrap_err();
        assert!(matches!(err, Error::InvalidHeader { .. }), "{name}: {err}");
    }
    let err = client
        .request("G T", "http://127.0.0.1:9/")
        .send()
        .unwrap_err();
    assert!(matches!(err, Error::InvalidHeader { .. }), "{err}");
}
