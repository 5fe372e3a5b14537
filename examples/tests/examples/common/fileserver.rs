//! The file server example as a child process on 127.0.0.1:0: start it with flags, read its
//! URLs from its banner, kill it when the test ends.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a log may take to hold the lines a test waits for.
const LINES_WAIT: Duration = Duration::from_secs(30);

/// Kills the server when the test ends, passing or not.
pub struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the file server on `root`; returns it and its `http://127.0.0.1:port/` URL.
pub fn fileserver(root: &Path) -> (Running, String) {
    let (server, banner) = fileserver_with(root, &["--no-https"]);
    let url = url_in(&banner, "http");
    (server, url)
}

/// Starts the file server on `root` (plain HTTP on 127.0.0.1:0, one worker) with `args`;
/// returns it and its banner, which names its URLs.
pub fn fileserver_with(root: &Path, args: &[&str]) -> (Running, String) {
    fileserver_logging(root, args, Stdio::inherit())
}

/// [`fileserver_with`], its log (stderr) going to `log`.
pub fn fileserver_logging(root: &Path, args: &[&str], log: Stdio) -> (Running, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_fileserver"))
        .args(["--http", "127.0.0.1:0", "--workers", "1"])
        .args(args)
        .arg("--root")
        .arg(root)
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .expect("fileserver starts");
    let mut server = Running(child);
    let mut banner = String::new();
    let stdout = server.0.stdout.take().expect("stdout");
    BufReader::new(stdout)
        .read_line(&mut banner)
        .expect("banner");
    (server, banner)
}

/// The `{scheme}://` URL the banner names.
pub fn url_in(banner: &str, scheme: &str) -> String {
    let prefix = format!("{scheme}://");
    banner
        .split_whitespace()
        .find(|w| w.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no {scheme} URL in {banner:?}"))
        .trim_end_matches(';')
        .to_owned()
}

impl Running {
    /// The server's process id (for reading its memory use from `/proc`).
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

/// Lines in `path` once it has `n` of them (its writer thread is asynchronous);
/// fails after 30 s.
pub fn lines_once(path: &Path, n: usize) -> Vec<String> {
    let deadline = Instant::now() + LINES_WAIT;
    loop {
        let text = fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        if lines.len() >= n {
            return lines;
        }
        assert!(
            Instant::now() < deadline,
            "{} has {} lines after {LINES_WAIT:?}, expected {n}",
            path.display(),
            lines.len()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
