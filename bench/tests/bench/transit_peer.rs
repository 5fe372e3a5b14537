//! The transit peer on a small generated feed: gtfs_gen writes it, `peer_transit_axum` loads
//! it and listens on a free port, and several routes' answers (the heavy and small mixes'
//! first routes, an unknown one) are checked over a real socket against an independent join
//! of the files in the contract's JSON shape.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

const GEN: &str = env!("CARGO_BIN_EXE_gtfs_gen");
const PEER: &str = env!("CARGO_BIN_EXE_peer_transit_axum");

/// Kills the server when the test ends, passed or not.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The contract's answer for every route, joined from the files with the csv crate.
fn expected(dir: &Path) -> HashMap<String, String> {
    let s = |v: &str| serde_json::to_string(v).unwrap();
    let mut stops: HashMap<String, Vec<String>> = HashMap::new();
    let mut r = csv::Reader::from_path(dir.join("stop_times.txt")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (trip, arr, dep, stop) = (
        col("trip_id"),
        col("arrival_time"),
        col("departure_time"),
        col("stop_id"),
    );
    for row in r.records() {
        let row = row.unwrap();
        let item = format!(
            r#"{{"stop_id":{},"arrival_time":{},"departure_time":{}}}"#,
            s(&row[stop]),
            s(&row[arr]),
            s(&row[dep])
        );
        stops.entry(row[trip].to_string()).or_default().push(item);
    }
    let mut r = csv::Reader::from_path(dir.join("trips.txt")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (route, service, trip) = (col("route_id"), col("service_id"), col("trip_id"));
    let mut routes: HashMap<String, Vec<String>> = HashMap::new();
    for row in r.records() {
        let row = row.unwrap();
        let schedules = stops
            .get(&row[trip])
            .map(|v| v.join(","))
            .unwrap_or_default();
        routes
            .entry(row[route].to_string())
            .or_default()
            .push(format!(
                r#"{{"trip_id":{},"service_id":{},"route_id":{},"schedules":[{schedules}]}}"#,
                s(&row[trip]),
                s(&row[service]),
                s(&row[route])
            ));
    }
    routes
        .into_iter()
        .map(|(k, v)| (k, format!("[{}]", v.join(","))))
        .collect()
}

/// GET `path` with `Connection: close`; returns the head and the body.
fn get(addr: &str, path: &str) -> (String, String) {
    let mut conn = TcpStream::connect(addr).unwrap();
    write!(
        conn,
        "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut all = String::new();
    conn.read_to_string(&mut all).unwrap();
    let (head, body) = all.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

#[test]
fn peer_answers_the_contract_shape() {
    let dir = tempfile::tempdir().unwrap();
    let gen = Command::new(GEN)
        .args([
            "--out",
            dir.path().to_str().unwrap(),
            "--seed",
            "5",
            "--scale",
            "0.005",
        ])
        .output()
        .unwrap();
    assert!(
        gen.status.success(),
        "{}",
        String::from_utf8_lossy(&gen.stderr)
    );

    let child = Command::new(PEER)
        .args([
            "--gtfs",
            dir.path().to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "1",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut server = Server(child);
    let mut lines = BufReader::new(server.0.stderr.take().unwrap()).lines();
    let loaded = lines.next().unwrap().unwrap();
    assert!(
        loaded.starts_with("loaded ") && loaded.contains(" trips and ") && loaded.ends_with(" ms"),
        "{loaded}"
    );
    let listening = lines.next().unwrap().unwrap();
    let addr = listening.strip_prefix("listening on ").unwrap().to_string();

    let expected = expected(dir.path());
    let read = |name| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let (heavy, small) = (read("routes_heavy.txt"), read("routes_small.txt"));
    let routes: Vec<&str> = heavy
        .lines()
        .take(3)
        .chain(small.lines().take(2))
        .chain(["Red"])
        .collect();
    for route in routes {
        let (head, body) = get(&addr, &format!("/schedules/{route}"));
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{head}"
        );
        assert_eq!(body, expected[route], "route {route}");
    }
    let (head, body) = get(&addr, "/schedules/no-such-route");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(body, "[]");
}
