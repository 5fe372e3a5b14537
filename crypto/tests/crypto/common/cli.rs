//! Runs the `openssl` command for interoperability tests; a missing program fails the test
//! naming the Debian package to install.

use std::path::Path;
use std::process::{Command, Output};

/// Upper bound on any child's life in seconds (enforced by coreutils `timeout`).
pub const CHILD_LIMIT_SECS: &str = "60";

/// Runs `program args` under the time limit in `dir`; panics naming `package` if the program
/// is missing.
pub fn run(program: &str, package: &str, dir: &Path, args: &[&str]) -> Output {
    let found = Command::new(program).arg("--version").output().is_ok();
    assert!(
        found,
        "the `{program}` command is missing: install the Debian package `{package}`"
    );
    Command::new("timeout")
        .arg(CHILD_LIMIT_SECS)
        .arg(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
}

/// Runs `openssl args` in `dir` and returns its stdout; panics with stderr if it fails.
pub fn openssl(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = run("openssl", "openssl", dir, args);
    assert!(
        out.status.success(),
        "openssl {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Whether `openssl args` succeeds in `dir` (for checks that are expected to fail).
pub fn openssl_ok(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = run("openssl", "openssl", dir, args);
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}
