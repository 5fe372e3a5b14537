//! Metrics read by the real thing: a server mounting `metrics::handler()` is scraped by
//! Prometheus (the Debian `prometheus` package, started by the test on a spare port); after a
//! few requests the test asks Prometheus' HTTP API for what it stored: requests by method and
//! status class, the duration histogram of the route pattern (not of the raw paths), and the
//! runtime's worker gauge. `promtool check metrics` accepts both formats' output, which counts
//! the client's requests by host and status class and its refused connections too.

use std::fs;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::peer::Peer;
use crate::common::*;
use moria_http::{metrics, HandlerResult, Request, Response, Router, Server};

fn user(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let id = req.param("id").unwrap_or("?").to_string();
    let pattern = req.route_pattern().unwrap_or("-").to_string();
    res.body(format!("user {id} via {pattern}"));
    Ok(())
}

/// A server with `/metrics` and `pattern` (route stats are per pattern and process-wide: each
/// test routes its own).
fn server(pattern: &str) -> Server {
    start(
        Server::builder(),
        Router::new()
            .get("/metrics", metrics::handler())
            .get(pattern, user),
    )
}

fn body(addr: std::net::SocketAddr, path: &str, accept: Option<&str>) -> String {
    let client = moria_http::client::Client::new().expect("client");
    let mut req = client.get(&format!("http://{addr}{path}"));
    if let Some(a) = accept {
        req = req.header("Accept", a);
    }
    let mut res = req.send().unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let mut text = String::new();
    res.read_to_string(&mut text).expect("body");
    text
}

/// Runs `promtool check metrics` on `text`; fails the test with its complaints.
fn promtool_check(text: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run `promtool` ({e}): install the Debian package `prometheus`")
        });
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write to promtool");
    let out = child.wait_with_output().expect("promtool");
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn promtool_accepts_both_formats() {
    let server = server("/promtool/users/:id");
    let addr = server.local_addr();
    let text = body(addr, "/promtool/users/7", None);
    assert_eq!(text, "user 7 via /promtool/users/:id");
    let text = body(addr, "/metrics", None);
    assert!(
        text.contains("# TYPE moria_http_requests_total counter"),
        "{text}"
    );
    assert!(text.contains("route=\"/promtool/users/:id\""), "{text}");
    promtool_check(&text);
    // The client's figures: the two requests above, and a refused connection.
    let closed = moria_runtime::net::spare_port().expect("spare port");
    let client = moria_http::client::Client::new().expect("client");
    assert!(client
        .get(&format!("http://127.0.0.1:{closed}/"))
        .send()
        .is_err());
    let text = body(addr, "/metrics", None);
    let ok = format!(
        "moria_http_client_requests_total{{host=\"127.0.0.1:{}\",status=\"2xx\"}} 2",
        addr.port()
    );
    assert!(text.contains(&ok), "{ok} not in\n{text}");
    let refused =
        format!("moria_http_client_connect_errors_total{{host=\"127.0.0.1:{closed}\"}} 1");
    assert!(text.contains(&refused), "{refused} not in\n{text}");
    let open = body(
        addr,
        "/metrics",
        Some("application/openmetrics-text; version=1.0.0"),
    );
    assert!(open.ends_with("# EOF\n"), "{open}");
    assert!(
        open.contains("# TYPE moria_http_requests counter"),
        "{open}"
    );
    stop(&server);
}

fn prometheus_config(target: std::net::SocketAddr) -> String {
    format!(
        "global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: moria
    static_configs:
      - targets: ['{target}']
"
    )
}

/// Percent-encodes a PromQL query for a URL's query string.
fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The value Prometheus stored for an instant `query`, if it has one sample.
fn stored(prom: std::net::SocketAddr, query: &str) -> Option<f64> {
    let text = body(
        prom,
        &format!("/api/v1/query?query={}", encode(query)),
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let result = v["data"]["result"].as_array()?;
    if result.len() != 1 {
        return None;
    }
    result[0]["value"][1].as_str()?.parse().ok()
}

#[test]
fn prometheus_scrapes_and_stores_the_values() {
    let server = server("/prom/users/:id");
    let addr = server.local_addr();
    for id in 1..=3 {
        body(addr, &format!("/prom/users/{id}"), None);
    }
    body(addr, "/nowhere", None);

    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path().to_owned();
    fs::write(d.join("prometheus.yml"), prometheus_config(addr)).unwrap();
    let port = moria_runtime::net::spare_port().expect("spare port");
    let config = format!("--config.file={}", d.join("prometheus.yml").display());
    let storage = format!("--storage.tsdb.path={}", d.join("data").display());
    let listen = format!("--web.listen-address=127.0.0.1:{port}");
    let args = [Path::new(&config), Path::new(&storage), Path::new(&listen)];
    let prom = Peer::start("prometheus", "prometheus", &args, port, dir);
    let prom_addr = std::net::SocketAddr::from(([127, 0, 0, 1], prom.port));

    let server_label = addr.to_string();
    let q = |m: &str, labels: &str| format!("{m}{{server=\"{server_label}\"{labels}}}");
    let route = "moria_http_request_duration_seconds_count{route=\"/prom/users/:id\"}";
    let not_found = q(
        "moria_http_requests_total",
        ",method=\"GET\",status=\"4xx\"",
    );
    wait_until("Prometheus to store a scrape of the server", || {
        stored(prom_addr, route) == Some(3.0) && stored(prom_addr, &not_found) == Some(1.0)
    });
    let up = stored(prom_addr, &format!("up{{instance=\"{addr}\"}}"));
    assert_eq!(up, Some(1.0), "the scrape target is up");
    let workers = stored(prom_addr, &format!("moria_workers{{instance=\"{addr}\"}}"));
    assert!(workers.is_some_and(|w| w >= 1.0), "workers {workers:?}");
    let accepted = stored(prom_addr, &q("moria_http_connections_accepted_total", ""));
    assert!(accepted.is_some_and(|n| n >= 4.0), "accepted {accepted:?}");
    let slow = "moria_http_request_duration_seconds_bucket{route=\"/prom/users/:id\",le=\"+Inf\"}";
    assert_eq!(stored(prom_addr, slow), Some(3.0));
    eprintln!(
        "prometheus stored: route count 3, GET 4xx 1, up 1, workers {workers:?}, accepted \
         {accepted:?}"
    );
    drop(prom);
    stop(&server);
}
