//! Running `curl` against a test server; a missing curl fails the test, naming the Debian
//! package.

use std::net::SocketAddr;
use std::process::{Command, Output};

/// Fails the test, naming the package to install, when the `curl` command is missing.
pub fn require_curl() {
    let found = Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "no working `curl` command: install the Debian package curl"
    );
}

/// Runs curl with `args` against `http://addr{target}`, body to stdout.
pub fn curl(addr: SocketAddr, target: &str, args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .args(args)
        .arg(format!("http://{addr}{target}"))
        .output()
        .unwrap()
}
