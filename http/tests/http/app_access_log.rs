//! The access-log layer: one line per request on its own target with method, path, status,
//! bytes, duration, request id and user, client text escaped. Runs in a process of its own
//! (`common::process`): it installs the process's one logger.

use std::sync::Mutex;

use moria_crypto::encoding::base64;
use moria_http::layer::{AccessLog, BasicAuth, RequestId, ROUTE_ACCESS_TARGET};
use moria_http::testing::TestRequest;
use moria_http::{HandlerResult, Request, Response, Router};

use crate::common::process::own_process;

static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.target() == ROUTE_ACCESS_TARGET
    }

    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            LINES.lock().unwrap().push(r.args().to_string());
        }
    }

    fn flush(&self) {}
}

fn five(_req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.status(201).body("12345");
    Ok(())
}

#[test]
fn each_request_is_one_line_with_id_user_and_duration() {
    if !own_process(
        module_path!(),
        "each_request_is_one_line_with_id_user_and_duration",
    ) {
        return;
    }
    log::set_logger(&Capture).unwrap();
    log::set_max_level(log::LevelFilter::Info);
    let app = Router::new()
        .get("/a", five)
        .layer(RequestId::new())
        .layer(AccessLog)
        .layer(BasicAuth::new("r").user("ada", "pw"));
    let ada = format!("Basic {}", base64(b"ada:pw"));
    TestRequest::get("/a")
        .header("Authorization", &ada)
        .header("X-Request-Id", "rid-1")
        .send(&app);
    TestRequest::get("/a%22%0a")
        .header("X-Request-Id", "rid-2")
        .send(&app);
    let lines = LINES.lock().unwrap();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let (line, rest) = lines[0].split_once("us ").unwrap();
    assert!(
        line.starts_with("127.0.0.1 \"GET\" \"/a\" 201 5 "),
        "{line}"
    );
    assert_eq!(rest, "id=rid-1 user=\"ada\"");
    // The auth layer answered 401 inside the access log: the line has its status.
    assert!(lines[1].contains("\"/a\\\"\\n\" 401 "), "{}", lines[1]);
    assert!(lines[1].ends_with("id=rid-2 user=\"-\""), "{}", lines[1]);
}
