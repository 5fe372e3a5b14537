//! HTTP/2 peers for the h2 tests: curl over HTTP/2 (h2c with prior knowledge, or TLS with
//! ALPN) and nghttp; a missing program fails the test, naming the Debian package.

use std::net::SocketAddr;
use std::process::{Command, Output};

/// Fails the test, naming the package, when `nghttp` is missing.
pub fn require_nghttp() {
    let found = Command::new("nghttp")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "no working `nghttp` command: install the Debian package nghttp2-client"
    );
}

/// curl over h2c with prior knowledge: `args`, then `http://addr{target}`.
pub fn curl_h2c(addr: SocketAddr, target: &str, args: &[&str]) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "20", "--http2-prior-knowledge"])
        .args(args)
        .arg(format!("http://{addr}{target}"))
        .output()
        .unwrap()
}

/// curl over HTTPS offering h2 by ALPN, trusting `cafile`.
pub fn curl_h2_tls(
    addr: SocketAddr,
    cafile: &std::path::Path,
    target: &str,
    args: &[&str],
) -> Output {
    Command::new("curl")
        .args(["-sS", "--max-time", "20", "--http2", "--cacert"])
        .arg(cafile)
        .args(args)
        .arg(format!("https://localhost:{}{target}", addr.port()))
        .arg("--resolve")
        .arg(format!("localhost:{}:127.0.0.1", addr.port()))
        .output()
        .unwrap()
}

/// Runs `nghttp` with `args` against `http://addr{target}` (h2c with prior knowledge).
pub fn nghttp(addr: SocketAddr, target: &str, args: &[&str]) -> Output {
    Command::new("nghttp")
        .args(["-n", "-t", "20"])
        .args(args)
        .arg(format!("http://{addr}{target}"))
        .output()
        .unwrap()
}

/// The stdout of a successful run, as text.
pub fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}
