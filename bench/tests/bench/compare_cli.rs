//! The compare command's command line: the scenario list, and clear errors for bad flags
//! before anything is installed or started.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_compare");

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN).args(args).output().expect("run compare");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn lists_every_scenario() {
    let (ok, out, err) = run(&["--list"]);
    assert!(ok, "{err}");
    for name in [
        "tfb-plaintext",
        "tfb-json",
        "tfb-db",
        "tfb-queries",
        "tfb-cached-queries",
        "tfb-updates",
        "tfb-fortunes",
        "hello-c100",
        "hello-c500",
        "hello-pipelined",
        "static-http-c100",
        "static-http-c500",
        "static-http-siege",
        "static-https-c100",
        "static-https-c500",
        "static-https-siege",
        "bigfile-http",
        "transit-small-c1",
        "transit-small-c10",
        "transit-small-c50",
        "transit-heavy-c50",
        "idle-http",
        "idle-https",
    ] {
        assert!(out.lines().any(|l| l.starts_with(name)), "{name} in {out}");
    }
}

#[test]
fn bad_flags_are_clear_errors() {
    let (ok, _, err) = run(&["--scenario", "no-such-thing"]);
    assert!(!ok && err.contains("no scenario matches"), "{err}");
    let (ok, _, err) = run(&["--seconds", "60"]);
    assert!(!ok && err.contains("--seconds must be 1..=15"), "{err}");
    let (ok, _, err) = run(&["--runs", "0"]);
    assert!(
        !ok && err.contains("--runs and --idle-conns at least 1"),
        "{err}"
    );
    let (ok, _, err) = run(&["--idle-conns", "0"]);
    assert!(!ok && err.contains("--idle-conns at least 1"), "{err}");
}
