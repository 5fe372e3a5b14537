//! The file server's observability flags, read by tools no one here wrote: `goaccess` (Debian
//! package) parses the Combined log the file server wrote (`--access-log-format combined
//! --access-log-file`) and counts the same requests; after the log is renamed and the server
//! gets SIGHUP (what logrotate does), new lines go to a new file at the old path. The
//! `--metrics` listener serves `/metrics` (counting those requests), `/healthz` and `/readyz`.

use std::fs;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::fileserver::lines_once;
use crate::common::Conn;

/// Kills the server when the test ends, passing or not.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// How long the test waits for the server's queued logger to write what it was given.
const LOG_WAIT: Duration = Duration::from_secs(20);

/// The address after `{scheme}://` in the banner word that follows `after`.
fn addr_in(banner: &str, after: &str) -> SocketAddr {
    let rest = banner
        .split(after)
        .nth(1)
        .unwrap_or_else(|| panic!("no {after:?} in {banner:?}"));
    let url = rest.split_whitespace().next().expect("a URL");
    url.trim_start_matches("http://")
        .trim_end_matches([';', '/'])
        .parse()
        .unwrap_or_else(|e| panic!("{url}: {e}"))
}

/// Waits until the files hold `n` lines together.
fn lines_once_total(paths: &[&Path], n: usize) {
    let deadline = Instant::now() + LOG_WAIT;
    loop {
        let have: usize = paths
            .iter()
            .map(|p| fs::read_to_string(p).map_or(0, |t| t.lines().count()))
            .sum();
        if have >= n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{have} lines of {n} after {LOG_WAIT:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `goaccess`' count of requests in a Combined log.
fn goaccess_total(log: &Path, dir: &Path) -> u64 {
    let report = dir.join("report.json");
    let out = Command::new("goaccess")
        .arg(log)
        .args(["--log-format=COMBINED", "--no-global-config", "-o"])
        .arg(&report)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run `goaccess` ({e}): install the Debian package `goaccess`")
        });
    assert!(
        out.status.success(),
        "goaccess: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_slice(&fs::read(&report).expect("goaccess report")).expect("JSON");
    assert_eq!(v["general"]["failed_requests"], 0, "{}", v["general"]);
    v["general"]["total_requests"]
        .as_u64()
        .expect("total_requests")
}

#[test]
fn goaccess_reads_the_combined_log_and_sighup_reopens_it() {
    let root = tempfile::tempdir().unwrap();
    fs::write(root.path().join("index.html"), "<p>hello</p>\n").unwrap();
    fs::write(root.path().join("a.txt"), "a\n".repeat(100)).unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("access.log");

    let mut child = Command::new(env!("CARGO_BIN_EXE_fileserver"))
        .args(["--http", "127.0.0.1:0", "--workers", "1", "--no-https"])
        .args(["--access-log-format", "combined", "--access-log-file"])
        .arg(&log)
        .args(["--metrics", "127.0.0.1:0", "--root"])
        .arg(root.path())
        .stdout(Stdio::piped())
        .spawn()
        .expect("fileserver starts");
    let stdout = child.stdout.take().expect("stdout");
    let server = Running(child);
    let mut banner = String::new();
    BufReader::new(stdout)
        .read_line(&mut banner)
        .expect("banner");
    let addr = addr_in(&banner, "on ");
    let metrics = addr_in(&banner, "metrics on ");

    let mut conn = Conn::open(addr);
    let targets = ["/", "/a.txt", "/missing", "/a.txt?x=\"1\""];
    let mut sent = 0;
    for round in 0..5 {
        for t in targets {
            let agent = format!("obs-test/{round} (\"quoted\")");
            let r = conn.get_with(
                t,
                &[("Referer", "http://example.test/"), ("User-Agent", &agent)],
            );
            assert!(r.status == 200 || r.status == 404, "{t}: {}", r.status);
            sent += 1;
        }
    }
    let lines = lines_once(&log, sent);
    assert_eq!(lines.len(), sent, "{lines:#?}");
    assert!(
        lines[0].contains("\"GET / HTTP/1.1\" 200 13 \"http://example.test/\""),
        "{}",
        lines[0]
    );
    let counted = goaccess_total(&log, logs.path());
    assert_eq!(
        counted, sent as u64,
        "goaccess counted {counted} of {sent} requests"
    );
    eprintln!("goaccess counted {counted} requests of {sent} sent");

    // logrotate: rename, then SIGHUP; the next line opens a new file at the old path.
    let rotated = logs.path().join("access.log.1");
    fs::rename(&log, &rotated).unwrap();
    let pid = server.0.id().to_string();
    let hup = Command::new("kill").args(["-HUP", &pid]).status();
    assert!(hup.is_ok_and(|s| s.success()), "kill -HUP {pid}");
    // The signal reaches the server at some point after `kill` returns: lines logged before
    // it still go to the renamed file. Each request is logged once, to one file or the other;
    // once a line is in the new file, the reopen happened.
    let count = |p: &Path| fs::read_to_string(p).map_or(0, |t| t.lines().count());
    let mut after = 0;
    let deadline = Instant::now() + LOG_WAIT;
    while count(&log) == 0 {
        assert!(Instant::now() < deadline, "no new log file after SIGHUP");
        assert_eq!(conn.get("/a.txt").status, 200);
        after += 1;
        lines_once_total(&[&rotated, &log], sent + after);
    }
    let fresh = lines_once(&log, 1);
    assert!(
        fresh[0].contains("\"GET /a.txt HTTP/1.1\" 200"),
        "{fresh:?}"
    );
    assert!(count(&rotated) >= sent);
    assert_eq!(count(&rotated) + count(&log), sent + after);

    let mut m = Conn::open(metrics);
    let text = m.get("/metrics");
    assert_eq!(text.status, 200);
    let body = text.text();
    let label = format!("server=\"{addr}\"");
    let ok = format!(
        "moria_http_requests_total{{{label},method=\"GET\",status=\"2xx\"}} {}",
        sent / 4 * 3 + after
    );
    assert!(body.contains(&ok), "{ok} not in\n{body}");
    assert_eq!(m.get("/healthz").status, 200);
    assert_eq!(m.get("/readyz").text(), "ready\n");
}
