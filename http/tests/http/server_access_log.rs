//! The access log: one combined-format line per request through `log`, target
//! `moria_http::access`, with client-supplied text escaped. The test runs in a process of its own (`common::process`): it installs the
//! process's one logger.

use std::sync::Mutex;

use crate::common::process::own_process;
use crate::common::*;
use moria_http::access_log::ACCESS_LOG_TARGET;
use moria_http::{HandlerResult, Request, Response, Server};

static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.target() == ACCESS_LOG_TARGET
    }

    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            LINES.lock().unwrap().push(r.args().to_string());
        }
    }

    fn flush(&self) {}
}

#[test]
fn requests_are_logged_in_combined_format() {
    // The logger is the process's, installed once: every other test's requests would reach it.
    if !own_process(module_path!(), "requests_are_logged_in_combined_format") {
        return;
    }
    log::set_logger(&Capture).unwrap();
    log::set_max_level(log::LevelFilter::Info);
    let server = start(
        Server::builder(),
        |_req: &mut Request<'_>, res: &mut Response| -> HandlerResult {
            res.status(201).body("12345");
            Ok(())
        },
    );
    exchange(
        server.local_addr(),
        b"GET /a?b=1 HTTP/1.1\r\nHost: h\r\nReferer: http://r/\r\nUser-Agent: ua \"quoted\"\r\n\r\n",
    );
    stop(&server);
    let lines = LINES.lock().unwrap();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line = &lines[0];
    assert!(line.starts_with("127.0.0.1 - - ["), "{line}");
    assert!(
        line.contains(" +0000] \"GET /a?b=1 HTTP/1.1\" 201 5 \"http://r/\" \"ua \\\"quoted\\\"\""),
        "{line}"
    );
}
