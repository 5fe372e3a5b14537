//! Headless Chromium driven over WebDriver (W3C, through Debian's `chromedriver`) with
//! moria-http's own client: open pages, find and click elements, attach files, run scripts,
//! take screenshots, switch `prefers-color-scheme`, read the DevTools network events. Both programs missing fail the test naming
//! their Debian packages.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use moria_http::client::Client;
use serde_json::{json, Value};

/// The key W3C WebDriver puts element references under.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long element look-ups and scripts may wait (page loads, a reload after an upload).
const WAIT_MS: u64 = 30_000;
/// How long one WebDriver command may take: past chromedriver's own 60 s bound on starting
/// Chromium, so a slow start on a loaded machine answers with chromedriver's reason.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// A Chromium session; the browser and the driver end with it.
pub struct Browser {
    driver: Child,
    base: String,
    client: Client,
    /// chromedriver's log, quoted when a command fails.
    log: PathBuf,
    /// Holds Chromium's profile and the log; removed with the session.
    _dir: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver on 127.0.0.1:0 and a headless Chromium session through it.
    pub fn start() -> Browser {
        assert!(
            std::path::Path::new("/usr/bin/chromium").exists(),
            "no /usr/bin/chromium: install the Debian package chromium"
        );
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("chromedriver.log");
        let mut driver = Command::new("chromedriver")
            .args(["--port=0", "--allowed-ips=127.0.0.1"])
            .arg(format!("--log-path={}", log.display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver runs: install the Debian package chromium-driver");
        let stdout = driver.stdout.take().expect("stdout");
        let mut port = None;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("started successfully on port ").nth(1) {
                port = rest.trim_end_matches('.').parse::<u16>().ok();
                break;
            }
        }
        let port = port.expect("chromedriver says its port");
        let profile_arg = format!("--user-data-dir={}", dir.path().join("profile").display());
        let mut browser = Browser {
            driver,
            base: format!("http://127.0.0.1:{port}/session"),
            client: Client::builder()
                .read_timeout(COMMAND_TIMEOUT)
                .build()
                .expect("client"),
            log,
            _dir: dir,
        };
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            // The file server's HTTPS listener has a self-signed certificate.
            "--ignore-certificate-errors",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            // Every name but the loopback fails at once: no start-up look-up can stall.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
            "--window-size=900,640",
            "--hide-scrollbars",
            &profile_arg,
        ];
        // The DevTools performance log carries each response's protocol and connection id.
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args},
            "goog:loggingPrefs": {"performance": "ALL"}
        }}});
        let created = browser.call("POST", "", Some(caps));
        let id = created["sessionId"]
            .as_str()
            .expect("session id")
            .to_string();
        browser.base = format!("{}/{id}", browser.base);
        browser.call(
            "POST",
            "/timeouts",
            Some(json!({"implicit": WAIT_MS, "script": WAIT_MS, "pageLoad": WAIT_MS})),
        );
        browser
    }

    /// One WebDriver command; returns its `value`, failing the test on an error answer.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let mut req = self.client.request(method, &url);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req
            .send()
            .unwrap_or_else(|e| panic!("{method} {url}: {e}\n{}", self.log_tail()));
        let status = resp.status();
        let text = resp.text().expect("answer");
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(
            status < 300,
            "{method} {path}: {status} {text}\n{}",
            self.log_tail()
        );
        v["value"].clone()
    }

    /// The last lines of chromedriver's log, for a failure message.
    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        format!("chromedriver's log ends:\n{tail}")
    }

    /// Opens `url` and waits for it to load.
    pub fn goto(&self, url: &str) {
        self.call("POST", "/url", Some(json!({ "url": url })));
    }

    /// The first element matching a CSS selector (waiting for it to appear).
    pub fn find(&self, css: &str) -> String {
        self.element("css selector", css)
    }

    /// The first element matching an XPath expression (waiting for it to appear).
    pub fn find_xpath(&self, xpath: &str) -> String {
        self.element("xpath", xpath)
    }

    fn element(&self, using: &str, value: &str) -> String {
        let v = self.call(
            "POST",
            "/element",
            Some(json!({"using": using, "value": value})),
        );
        v[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("no element {value:?}: {v}"))
            .to_string()
    }

    /// Clicks an element (waiting for a navigation it starts).
    pub fn click(&self, element: &str) {
        self.call(
            "POST",
            &format!("/element/{element}/click"),
            Some(json!({})),
        );
    }

    /// Types `text` into an element; for a file input, newline-separated paths attach files.
    pub fn send_keys(&self, element: &str, text: &str) {
        self.call(
            "POST",
            &format!("/element/{element}/value"),
            Some(json!({ "text": text })),
        );
    }

    /// The DevTools events logged since the last call (chromedriver's performance log), each
    /// `{"method": …, "params": …}`.
    pub fn devtools_events(&self) -> Vec<Value> {
        let entries = self.call("POST", "/se/log", Some(json!({"type": "performance"})));
        entries
            .as_array()
            .expect("log entries")
            .iter()
            .filter_map(|e| e["message"].as_str())
            .filter_map(|m| serde_json::from_str::<Value>(m).ok())
            .map(|m| m["message"].clone())
            .collect()
    }

    /// Runs `js` as a function body in the page; returns what it returns.
    pub fn script(&self, js: &str) -> Value {
        self.call(
            "POST",
            "/execute/sync",
            Some(json!({"script": js, "args": []})),
        )
    }

    /// Runs `js` with a callback as its last argument; returns what it is called with.
    pub fn script_async(&self, js: &str) -> Value {
        self.call(
            "POST",
            "/execute/async",
            Some(json!({"script": js, "args": []})),
        )
    }

    /// A PNG of the viewport.
    pub fn screenshot(&self) -> Vec<u8> {
        let b64 = self.call("GET", "/screenshot", None);
        moria_crypto::encoding::from_base64(b64.as_str().expect("base64")).expect("PNG")
    }

    /// Emulates `prefers-color-scheme: dark` (or light) through the DevTools protocol.
    pub fn color_scheme(&self, scheme: &str) {
        self.call(
            "POST",
            "/goog/cdp/execute",
            Some(json!({"cmd": "Emulation.setEmulatedMedia", "params": {
                "features": [{"name": "prefers-color-scheme", "value": scheme}]
            }})),
        );
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let url = self.base.clone();
        let _ = self.client.request("DELETE", &url).send();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
