//! Autobahn's WebSocket cases through `kosoku` (.tools/venv, `./test.sh --install-only`):
//! against the echo server (`-m fuzzingclient`) and driving the client (`-m fuzzingserver`),
//! with permessage-deflate offered (groups 12 and 13) and with context takeover off (the
//! low-memory setting). Every case must be OK, NON-STRICT or INFORMATIONAL. The performance
//! group 9.* runs only with `MORIA_AUTOBAHN_FULL=1` (bench/scripts/autobahn.sh).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use moria_http::client::Client;
use moria_http::ws::{Config, DeflateConfig, Message};

use crate::common::stop;
use crate::common::ws::{echo, echo_server, tool};

/// The verdicts a case may end with.
const ACCEPTED: [&str; 3] = ["OK", "NON-STRICT", "INFORMATIONAL"];

/// `-x 9.*` unless the full run is asked for.
fn exclusions() -> Vec<&'static str> {
    match std::env::var_os("MORIA_AUTOBAHN_FULL") {
        Some(_) => vec![],
        None => vec!["-x", "9.*"],
    }
}

/// Checks kosoku's `index.json` in `dir`: every case accepted; returns the verdict counts.
fn check_report(dir: &Path) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(dir.join("index.json")).expect("kosoku wrote index.json");
    let index: serde_json::Value = serde_json::from_str(&text).expect("index.json is JSON");
    let mut counts = BTreeMap::new();
    let mut bad = Vec::new();
    for cases in index.as_object().expect("agents").values() {
        for (id, case) in cases.as_object().expect("cases") {
            let b = case["behavior"].as_str().unwrap_or("?");
            let c = case["behaviorClose"].as_str().unwrap_or("?");
            *counts.entry(b.to_string()).or_insert(0) += 1;
            if !ACCEPTED.contains(&b) || !ACCEPTED.contains(&c) {
                bad.push(format!("{id}: {b}/{c}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "cases not passed: {bad:?} (reports in {dir:?})"
    );
    assert!(!counts.is_empty(), "no case ran");
    counts
}

fn run_against_server(config: Config, include: &[&str]) -> BTreeMap<String, usize> {
    let f = echo_server(false, config);
    let out = tempfile::tempdir().unwrap();
    let mut args = vec!["-m", "fuzzingclient", "-p", "4"];
    for i in include {
        args.extend(["-i", i]);
    }
    args.extend(exclusions());
    let addr = f.server.local_addr().to_string();
    let status = Command::new(tool("venv/bin/kosoku"))
        .args(&args)
        .arg("-o")
        .arg(out.path())
        .arg(&addr)
        .stdout(Stdio::null())
        .status()
        .expect("kosoku runs");
    let counts = check_report(out.path());
    assert!(status.success(), "kosoku failed: {status}");
    stop(&f.server);
    counts
}

/// Compression level 1: the compression groups send hundreds of megabytes, and the level
/// changes nothing the cases check.
fn deflate(base: DeflateConfig) -> Config {
    Config::new().deflate(DeflateConfig { level: 1, ..base })
}

#[test]
fn every_case_passes_against_the_echo_server_with_deflate_offered() {
    let counts = run_against_server(deflate(DeflateConfig::default()), &[]);
    eprintln!("kosoku against the server: {counts:?}");
}

#[test]
fn the_compression_cases_pass_without_context_takeover() {
    let counts = run_against_server(deflate(DeflateConfig::low_memory()), &["12.*", "13.*"]);
    eprintln!("kosoku against the server, no context takeover: {counts:?}");
}

#[test]
fn every_case_passes_driving_the_client_with_deflate_offered() {
    let out = tempfile::tempdir().unwrap();
    let mut kosoku = Command::new(tool("venv/bin/kosoku"))
        .args(["-m", "fuzzingserver"])
        .args(exclusions())
        .arg("-o")
        .arg(out.path())
        .arg("127.0.0.1:0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kosoku runs");
    let mut stderr = BufReader::new(kosoku.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let base = line
        .trim()
        .rsplit_once(' ')
        .map(|(_, url)| url.to_string())
        .unwrap_or_else(|| panic!("kosoku said {line:?}"));
    let client = Client::new().unwrap();
    let count: usize = match client
        .websocket(&format!("{base}/getCaseCount"))
        .connect()
        .unwrap()
        .read()
        .unwrap()
    {
        Message::Text(t) => t.trim().parse().unwrap(),
        m => panic!("case count: {m:?}"),
    };
    let config = deflate(DeflateConfig::default());
    for case in 1..=count {
        let url = format!("{base}/runCase?case={case}&agent=moria");
        if let Ok(ws) = client.websocket(&url).config(config.clone()).connect() {
            echo(ws);
        }
    }
    let mut done = client
        .websocket(&format!("{base}/updateReports?agent=moria"))
        .connect()
        .unwrap();
    while done.read().is_ok() {}
    let status = kosoku.wait().unwrap();
    let counts = check_report(out.path());
    assert!(status.success(), "kosoku failed: {status}");
    eprintln!("kosoku driving the client ({count} cases): {counts:?}");
}
