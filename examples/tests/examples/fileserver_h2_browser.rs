//! Headless Chromium loads the file server's listing over HTTPS (self-signed certificate,
//! ALPN) and then a file and a subdirectory's listing: the browser says every page came over
//! `h2` (Navigation Timing's `nextHopProtocol`) and the DevTools network events put the four
//! responses (three pages, the favicon) on one connection; the server's access log says
//! `HTTP/2.0` on every line. (The server's metrics counted two TLS handshakes and four
//! requests in such a session: Chromium opened a second connection that carried none.)

use std::fs;
use std::process::Stdio;

use crate::common::fileserver::{fileserver_logging, lines_once, url_in};
use crate::common::webdriver::Browser;

/// The protocol the current page came over.
fn protocol(browser: &Browser) -> String {
    let v = browser.script("return performance.getEntriesByType('navigation')[0].nextHopProtocol");
    v.as_str().unwrap_or_default().to_owned()
}

#[test]
fn chromium_loads_the_listing_over_h2_on_one_connection() {
    let root = tempfile::tempdir().unwrap();
    fs::create_dir(root.path().join("docs")).unwrap();
    fs::write(root.path().join("docs/guide.txt"), "guide\n").unwrap();
    fs::write(root.path().join("hello.txt"), "hello\n").unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("access.log");
    let (_server, banner) = fileserver_logging(
        root.path(),
        &[
            "--https",
            "127.0.0.1:0",
            "--access-log-format",
            "json",
            "--access-log-file",
            log.to_str().unwrap(),
        ],
        Stdio::inherit(),
    );
    let https = url_in(&banner, "https");

    let browser = Browser::start();
    browser.goto(&https);
    browser.find("a[href='hello.txt']");
    assert_eq!(protocol(&browser), "h2");
    browser.goto(&format!("{}/hello.txt", https.trim_end_matches('/')));
    assert_eq!(protocol(&browser), "h2");
    browser.goto(&format!("{}/docs/", https.trim_end_matches('/')));
    browser.find("a[href='guide.txt']");
    assert_eq!(protocol(&browser), "h2");

    // Every response the pages got came over h2, on one connection.
    let responses: Vec<(String, String, u64)> = browser
        .devtools_events()
        .iter()
        .filter(|e| e["method"] == "Network.responseReceived")
        .map(|e| &e["params"]["response"])
        .filter(|r| r["url"].as_str().is_some_and(|u| u.starts_with(&https)))
        .map(|r| {
            let text = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            (
                text("url"),
                text("protocol"),
                r["connectionId"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    // The three pages and the favicon.
    assert_eq!(responses.len(), 4, "{responses:?}");
    for (_, protocol, connection) in &responses {
        assert_eq!(
            (protocol.as_str(), *connection),
            ("h2", responses[0].2),
            "{responses:?}"
        );
    }

    // The server's side: every request logged as HTTP/2.0.
    let lines = lines_once(&log, 3);
    for line in &lines {
        assert!(line.contains("\"version\":\"HTTP/2.0\""), "{lines:#?}");
    }
}
