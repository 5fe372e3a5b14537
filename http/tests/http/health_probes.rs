//! `/healthz` and `/readyz`: alive answers 200; ready answers 200 until its token fires (the
//! server drains: 503 `draining`) or while a check fails (503 naming the check, the reason kept
//! out of the answer).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::common::*;
use moria_http::health::{healthz, Readiness};
use moria_http::{Router, Server};
use moria_runtime::ShutdownToken;

fn probe(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    let raw = format!("GET {path} HTTP/1.1\r\nHost: h\r\n\r\n");
    let r = exchange(addr, raw.as_bytes());
    (r.status, r.text())
}

#[test]
fn readiness_follows_the_token_and_the_checks() {
    let draining = ShutdownToken::new();
    let db_up = Arc::new(AtomicBool::new(true));
    let up = Arc::clone(&db_up);
    let ready = Readiness::new(draining.clone()).check("database", move || {
        if up.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err("connection refused (secret detail)".into())
        }
    });
    let server = start(
        Server::builder(),
        Router::new()
            .get("/healthz", healthz())
            .get("/readyz", ready),
    );
    let addr = server.local_addr();
    assert_eq!(probe(addr, "/healthz"), (200, "ok\n".into()));
    assert_eq!(probe(addr, "/readyz"), (200, "ready\n".into()));
    db_up.store(false, Ordering::SeqCst);
    assert_eq!(
        probe(addr, "/readyz"),
        (503, "database: not ready\n".into())
    );
    db_up.store(true, Ordering::SeqCst);
    assert_eq!(probe(addr, "/readyz").0, 200);
    draining.trigger();
    assert_eq!(probe(addr, "/readyz"), (503, "draining\n".into()));
    assert_eq!(probe(addr, "/healthz").0, 200);
    stop(&server);
}
