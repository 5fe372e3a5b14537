//! `curl` as the peer: fail naming the Debian package when it is missing.

use std::process::Command;

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
