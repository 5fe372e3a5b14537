//! Logging never blocks a worker: with stderr a pipe nobody reads, a server that logs every
//! request (the access log and a `log::info!` in the handler, through env_logger behind
//! `moria_runtime::logger::QueuedLogger`) keeps serving; the lines that did not fit are dropped
//! and counted, and `dropped N log lines` is written once stderr drains. Before, env_logger's
//! write blocked the worker once the pipe's 64 KiB were full and the requests stalled.
//!
//! The test re-runs its own binary as the child (`MORIA_LOG_CHILD` set) with stderr piped and
//! left unread until the child says it has served every request.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::process::test_name;
use crate::common::*;
use moria_http::{HandlerResult, Request, Response, Server};
use moria_runtime::logger::QueuedLogger;

const CHILD_ENV: &str = "MORIA_LOG_CHILD";
/// Two lines, about 150 bytes, of log per request: several times a pipe's 64 KiB.
const REQUESTS: usize = 3_000;
/// Long enough for any healthy run; only stalled requests reach it.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// The child: log everything at info to stderr, serve and count the requests.
fn child() {
    let inner = env_logger::Builder::new()
        .filter_level(log::LevelFilter::Info)
        .filter_module("may", log::LevelFilter::Warn)
        // The request span (feature `tracing`, on in this test build) is also a `log` record
        // when the workspace turns on tracing's `log` feature (the bench's axum does) and no
        // subscriber is installed: not the two lines per request this test counts.
        .filter_module("moria_http::dispatch::trace", log::LevelFilter::Warn)
        .build();
    let max = inner.filter();
    QueuedLogger::start(inner, 256)
        .unwrap()
        .install(max)
        .unwrap();
    let server = start(
        Server::builder(),
        |req: &mut Request<'_>, res: &mut Response| -> HandlerResult {
            log::info!("handling {}", req.path());
            res.body("ok");
            Ok(())
        },
    );
    for i in 0..REQUESTS {
        let raw = format!("GET /r{i} HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
        assert_eq!(exchange(server.local_addr(), raw.as_bytes()).status, 200);
    }
    stop(&server);
    let mut out = std::io::stdout();
    out.write_all(format!("served {REQUESTS}\n").as_bytes())
        .unwrap();
    out.flush().unwrap();
    log::logger().flush();
}

#[test]
fn requests_are_served_while_stderr_is_a_pipe_nobody_reads() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return child();
    }
    let mut proc = Command::new(std::env::current_exe().unwrap())
        .args([
            &test_name(
                module_path!(),
                "requests_are_served_while_stderr_is_a_pipe_nobody_reads",
            ),
            "--exact",
            "--nocapture",
        ])
        .env(CHILD_ENV, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(proc.stdout.take().unwrap());
    let (tx, served) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = stdout.lines().map_while(Result::ok);
        let done = lines.any(|l| l.ends_with(&format!("served {REQUESTS}")));
        let _ = tx.send(done);
        // Keep reading: the harness in the child still reports on its stdout.
        lines.for_each(drop);
    });
    let outcome = served.recv_timeout(HANG_GUARD);
    if !matches!(outcome, Ok(true)) {
        let _ = proc.kill();
        panic!("the child did not serve its {REQUESTS} requests with stderr unread: {outcome:?}");
    }
    let mut err = String::new();
    proc.stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = proc.wait().unwrap();
    let tail = &err[err.len().saturating_sub(2000)..];
    assert!(status.success(), "{status:?}: {tail}");
    let report = err
        .lines()
        .find(|l| l.contains("dropped ") && l.contains(" log lines"))
        .unwrap_or_else(|| panic!("no drop report in {} bytes of stderr", err.len()));
    let n: usize = report
        .split("dropped ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{report}"));
    assert!(n > 0 && n < 2 * REQUESTS, "{report}");
    assert!(err.contains("handling /r0"), "the first lines were written");
}
