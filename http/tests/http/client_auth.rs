//! Credentials answered on 401: Digest (SHA-256 and MD5) checked by a handler that recomputes
//! RFC 7616's response, Basic, a wrong password answered once then returned as 401, and a POST
//! body sent again with the answer.

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::common::*;
use moria_http::client::Client;
use moria_http::{HandlerResult, Request, Response, Server};

const NONCE: &str = "dcd98b7102dd2f0e8b11d0f600bfb0c093";

/// The auth-params of a Digest Authorization value (quotes removed).
fn params(value: &str) -> Vec<(String, String)> {
    value
        .trim_start_matches("Digest ")
        .split(", ")
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
        .collect()
}

fn h(alg: &str, s: &str) -> String {
    moria_crypto::hash(alg, s.as_bytes()).unwrap().to_hex()
}

/// Recomputes the response of RFC 7616 §3.4.1 for user `u`, password `p`.
fn digest_ok(req: &Request<'_>, alg: &str) -> bool {
    let Some(value) = req.header_str("authorization") else {
        return false;
    };
    let p = params(value);
    let get = |k: &str| {
        p.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or_default()
    };
    let ha1 = h(alg, &format!("{}:moria:p", get("username")));
    let ha2 = h(alg, &format!("{}:{}", req.method_str(), get("uri")));
    let want = h(
        alg,
        &format!(
            "{ha1}:{}:{}:{}:{}:{ha2}",
            get("nonce"),
            get("nc"),
            get("cnonce"),
            get("qop")
        ),
    );
    get("username") == "u"
        && get("nonce") == NONCE
        && get("uri") == req.target()
        && get("opaque") == "op"
        && get("response") == want
}

fn handler(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let mut body = String::new();
    req.body().read_to_string(&mut body)?;
    let (ok, challenge) = match req.path() {
        "/sha" => (
            digest_ok(req, "sha256"),
            format!("Digest realm=\"moria\", qop=\"auth\", algorithm=SHA-256, nonce=\"{NONCE}\", opaque=\"op\""),
        ),
        "/md5" => (
            digest_ok(req, "md5"),
            format!("Digest realm=\"moria\", qop=\"auth\", nonce=\"{NONCE}\", opaque=\"op\""),
        ),
        _ => (
            req.header_str("authorization") == Some("Basic dTpw"),
            "Basic realm=\"moria\"".to_owned(),
        ),
    };
    if ok {
        res.body(format!("welcome {body}"));
    } else {
        res.status(401).header("WWW-Authenticate", challenge);
    }
    Ok(())
}

#[test]
fn digest_sha256_md5_and_basic_are_answered() {
    let server = start(Server::builder(), handler);
    let client = Client::new().unwrap();
    for path in ["/sha", "/md5", "/basic"] {
        let r = client
            .post(&url(&server, &format!("{path}?x=1")))
            .auth("u", "p")
            .body("again")
            .send()
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
        assert_eq!(r.text().unwrap(), "welcome again", "{path}");
    }
    assert_eq!(server.stats().accepted, 1, "the 401s kept the connection");
    stop(&server);
}

#[test]
fn a_wrong_password_is_answered_once_then_returned() {
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&requests);
    let server = start(
        Server::builder(),
        move |req: &mut Request<'_>, res: &mut Response| {
            counted.fetch_add(1, Ordering::SeqCst);
            handler(req, res)
        },
    );
    let client = Client::new().unwrap();
    for path in ["/sha", "/basic"] {
        let before = requests.load(Ordering::SeqCst);
        let r = client
            .get(&url(&server, path))
            .auth("u", "wrong")
            .send()
            .unwrap();
        assert_eq!(r.status(), 401, "{path}");
        assert_eq!(
            requests.load(Ordering::SeqCst) - before,
            2,
            "one answer: {path}"
        );
        let r = client.get(&url(&server, path)).send().unwrap();
        assert_eq!(r.status(), 401, "no credentials, no answer: {path}");
    }
    stop(&server);
}
