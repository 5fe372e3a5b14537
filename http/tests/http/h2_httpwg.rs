//! Conformance: `httpwg` (the `httpwg-cli` crate, a Rust successor of h2spec: RFC 9113 and
//! RFC 7541 cases) against the server over h2c, with a handler that answers every request and
//! reads its body. Every case must pass but those listed in [`DISPUTED`], each with the reason.
//! A missing `httpwg` fails the test naming how to install it (`./test.sh` does).

use std::io::Read;
use std::process::Command;

use moria_http::{Request, Response, Server};

use crate::common::{start, stop};

/// Cases argued wrong, each with why (none so far).
const DISPUTED: &[(&str, &str)] = &[];

/// The `httpwg` binary: on PATH or in `~/.cargo/bin`.
fn httpwg() -> String {
    let home = std::env::var("HOME").unwrap_or_default();
    let in_cargo = format!("{home}/.cargo/bin/httpwg");
    if std::path::Path::new(&in_cargo).exists() {
        return in_cargo;
    }
    let on_path = Command::new("httpwg").arg("-h").output().is_ok();
    assert!(
        on_path,
        "no `httpwg`: run ./test.sh --install-only (cargo install --locked httpwg-cli)"
    );
    "httpwg".into()
}

#[test]
fn every_httpwg_case_passes_over_h2c() {
    let bin = httpwg();
    let handler = |req: &mut Request<'_>, res: &mut Response| {
        let mut body = Vec::new();
        req.body().read_to_end(&mut body)?;
        res.body(vec![b'x'; 100]);
        Ok(())
    };
    let server = start(Server::builder(), handler);
    let text = run(&bin, &server.local_addr().to_string());
    stop(&server);
    let failed: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("FAIL") || l.contains('✗') || l.contains("failed"))
        .filter(|l| !DISPUTED.iter().any(|(case, _)| l.contains(case)))
        .collect();
    let (passed, total) = totals(&text).unwrap_or_else(|| panic!("no totals from httpwg: {text}"));
    eprintln!("httpwg: {passed}/{total} passed");
    assert!(total > 0 && passed + DISPUTED.len() >= total, "{text}");
    assert!(failed.is_empty(), "{text}");
}

/// Runs every httpwg case against `addr`; returns what it printed.
fn run(bin: &str, addr: &str) -> String {
    let out = Command::new(bin)
        .args(["-a", addr])
        // httpwg waits 250 ms for a frame by default: too short for a debug build on a
        // loaded machine. These are bounds on a hang, not timings.
        .args(["--frame-timeout", "10000", "--connect-timeout", "10000"])
        .output()
        .expect("httpwg runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        text
    } else {
        format!("{text}\nhttpwg failed: {}", out.status)
    }
}

/// The `Passed N/M` totals httpwg prints (its colour codes removed).
fn totals(text: &str) -> Option<(usize, usize)> {
    let line = text.lines().find(|l| l.contains("Passed"))?;
    let mut plain = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            chars.by_ref().find(|&c| c == 'm');
        } else {
            plain.push(c);
        }
    }
    let word = plain.split_whitespace().find(|w| w.contains('/'))?;
    let (a, b) = word.split_once('/')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}
