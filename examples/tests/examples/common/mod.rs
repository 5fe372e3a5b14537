//! Helpers for the example tests: start an example binary on 127.0.0.1:0 and talk HTTP/1.1 to
//! it over one raw keep-alive connection; stop one with SIGINT.

pub mod fileserver;
pub mod webdriver;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use moria_http::client::read_response;

/// Largest body [`Conn::get`] reads.
const MAX_BODY: u64 = 1 << 30;

/// How long a test waits for the program to say where it listens.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// An example program serving on loopback; killed on drop.
pub struct Running {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

/// curl (`-sS`, at most 300 s) with `args`; returns what it printed, ending in the status
/// code (`-w %{http_code}`). Fails the test when curl itself fails.
pub fn curl(args: &[&str]) -> String {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "300", "-w", "%{http_code}"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("curl runs: install the Debian package curl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `program` with `args` and `env` to completion; returns its status and stderr.
pub fn run_to_end(program: &str, args: &[&str], env: &[(&str, &str)]) -> (ExitStatus, String) {
    let out = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// How long a test waits for the program to exit after a signal.
const EXIT_TIMEOUT: Duration = Duration::from_secs(60);

/// Starts `program` and waits for its `listening on http://ADDR` log line.
pub fn start(program: &str, args: &[&str], env: &[(&str, &str)]) -> Running {
    start_logged(program, args, env, "listening on http://")
}

/// Starts `program` and waits for a log line with `marker` followed by the address.
pub fn start_logged(program: &str, args: &[&str], env: &[(&str, &str)], marker: &str) -> Running {
    let marker = marker.to_owned();
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    let stderr = child.stderr.take().expect("stderr is piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut log = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(addr) = line.split(marker.as_str()).nth(1) {
                let addr = addr.split_whitespace().next().unwrap_or_default();
                let _ = tx.send(Ok(addr.parse::<SocketAddr>().expect("address")));
            }
            log.push_str(&line);
            log.push('\n');
        }
        let _ = tx.send(Err(log));
    });
    match rx.recv_timeout(START_TIMEOUT) {
        Ok(Ok(addr)) => Running { child, addr },
        Ok(Err(log)) => panic!("{program} exited before listening:\n{log}"),
        Err(e) => panic!("{program} did not say where it listens: {e}"),
    }
}

impl Running {
    /// Sends SIGINT (what Ctrl-C sends) and waits for the program to exit.
    pub fn interrupt(&mut self) -> ExitStatus {
        let pid = self.child.id().to_string();
        let kill = Command::new("kill").args(["-INT", &pid]).status();
        assert!(kill.is_ok_and(|s| s.success()), "kill -INT {pid}");
        let started = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(started.elapsed() < EXIT_TIMEOUT, "no exit after SIGINT");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One parsed response.
#[derive(Debug)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Header fields in order, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub body: Vec<u8>,
}

impl Reply {
    /// Every value of header `name` (lower case).
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The single value of header `name`; fails when it is missing or repeated.
    pub fn one(&self, name: &str) -> &str {
        match self.all(name)[..] {
            [v] => v,
            ref other => panic!("header {name}: {other:?} in {:?}", self.headers),
        }
    }

    /// The body as UTF-8.
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("UTF-8 body")
    }
}

/// A keep-alive HTTP/1.1 connection.
pub struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    /// Connects to `addr`.
    pub fn open(addr: SocketAddr) -> Conn {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        Conn {
            reader: BufReader::new(s),
        }
    }

    /// Sends `GET target` and reads the answer with moria-http's response decoder.
    pub fn get(&mut self, target: &str) -> Reply {
        self.get_with(target, &[])
    }

    /// Sends `GET target` with extra header fields and reads the answer.
    pub fn get_with(&mut self, target: &str, fields: &[(&str, &str)]) -> Reply {
        let mut head = format!("GET {target} HTTP/1.1\r\nHost: localhost\r\n");
        for (name, value) in fields {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        self.reader.get_mut().write_all(head.as_bytes()).unwrap();
        let r = read_response(&mut self.reader, false, MAX_BODY).expect("a response");
        let headers = r
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    n.to_ascii_lowercase(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            })
            .collect();
        Reply {
            status: r.status,
            headers,
            body: r.body,
        }
    }
}
