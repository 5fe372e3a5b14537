//! An application on a real server, driven with `curl`: a JSON round trip, problem details
//! for a malformed body and 413 for one over the limit, a CORS preflight, request ids, Basic
//! auth with per-user rights, cookies kept in curl's cookie jar, and the compression layer.

use std::sync::atomic::{AtomicU64, Ordering};

use moria_http::app::{Cookie, SignedCookies};
use moria_http::layer::{read_only, AccessLog, BasicAuth, Compress, Cors, RequestId};
use moria_http::{HttpError, Request, Response, Router, Server};
use serde::Deserialize;
use serde_json::Value;

use crate::common::curl::{curl, require_curl};
use crate::common::{start, stop};

struct App {
    count: AtomicU64,
    cookies: SignedCookies,
}

#[derive(Deserialize)]
struct Add {
    by: u64,
}

fn add(app: &App, req: &mut Request<'_>, res: &mut Response) -> Result<(), HttpError> {
    let add: Add = req.json()?;
    let now = app.count.fetch_add(add.by, Ordering::Relaxed) + add.by;
    app.cookies
        .set(res, &Cookie::new("last", &now.to_string()).path("/"))
        .map_err(HttpError::internal)?;
    res.json(&serde_json::json!({ "count": now, "user": req.user() }))?;
    Ok(())
}

fn last(app: &App, req: &mut Request<'_>, res: &mut Response) -> Result<(), HttpError> {
    let last = app.cookies.get(req, "last").unwrap_or_else(|| "-".into());
    res.content_type("text/plain")
        .body(format!("last={last} {}", "pad ".repeat(400)));
    Ok(())
}

fn app() -> Router<App> {
    let auth = BasicAuth::new("counter")
        .user("reader", "r")
        .user("writer", "w")
        .rights(|user, req| user == "writer" || read_only(req.method()));
    Router::with_state(App {
        count: AtomicU64::new(0),
        cookies: SignedCookies::new(&[&[9; 32]]).unwrap(),
    })
    .post("/count", add)
    .get("/last", last)
    .with(Compress::default())
    .layer(RequestId::new())
    .layer(AccessLog)
    .layer(
        Cors::new()
            .allow_origin("https://ui.example")
            .allow_methods(&["GET", "POST"]),
    )
    .layer(auth)
}

/// curl's `-w` status code after the body.
fn split(out: &std::process::Output) -> (u16, String) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.split_at(text.len() - 3);
    (code.parse().unwrap(), body.to_string())
}

#[test]
fn an_application_behind_curl() {
    require_curl();
    let server = start(Server::builder().max_body(4096), app());
    let addr = server.local_addr();
    let jar = tempfile::tempdir().unwrap();
    let jar = jar.path().join("cookies").to_string_lossy().into_owned();
    let post = |user: &str, body: &str| {
        split(&curl(
            addr,
            "/count",
            &[
                "-u",
                user,
                "-H",
                "Content-Type: application/json",
                "--data-binary",
                body,
                "-b",
                &jar,
                "-c",
                &jar,
                "-w",
                "%{http_code}",
            ],
        ))
    };
    let (code, body) = post("writer:w", r#"{"by": 2}"#);
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (v["count"].as_u64(), v["user"].as_str()),
        (Some(2), Some("writer"))
    );
    let (code, body) = post("writer:w", r#"{"by": "two"}"#);
    assert_eq!(code, 400);
    let p: Value = serde_json::from_str(&body).unwrap();
    assert!(
        p["detail"].as_str().unwrap().contains("invalid type"),
        "{p}"
    );
    let (code, _) = post("reader:r", r#"{"by": 1}"#);
    assert_eq!(code, 403);
    let (code, _) = post("writer:nope", r#"{"by": 1}"#);
    assert_eq!(code, 401);
    let big = format!(r#"{{"by": 1, "pad": "{}"}}"#, "x".repeat(8000));
    let (code, _) = post("writer:w", &big);
    assert_eq!(code, 413);

    // The signed cookie comes back from curl's jar; --compressed decodes the gzip layer.
    let out = curl(
        addr,
        "/last",
        &[
            "-u",
            "reader:r",
            "-b",
            &jar,
            "--compressed",
            "-D",
            "-",
            "-H",
            "X-Request-Id: curl-1",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout).to_lowercase();
    assert!(text.contains("last=2 "), "{text}");
    assert!(text.contains("content-encoding: gzip"), "{text}");
    assert!(text.contains("x-request-id: curl-1"), "{text}");

    // A preflight needs no credentials... but the auth layer runs after CORS, which answers.
    let out = curl(
        addr,
        "/count",
        &[
            "-X",
            "OPTIONS",
            "-D",
            "-",
            "-o",
            "/dev/null",
            "-H",
            "Origin: https://ui.example",
            "-H",
            "Access-Control-Request-Method: POST",
        ],
    );
    let head = String::from_utf8_lossy(&out.stdout).to_lowercase();
    assert!(head.starts_with("http/1.1 204"), "{head}");
    assert!(
        head.contains("access-control-allow-origin: https://ui.example"),
        "{head}"
    );
    assert!(
        head.contains("access-control-allow-methods: get, post"),
        "{head}"
    );
    stop(&server);
}
