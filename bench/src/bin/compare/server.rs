//! The servers under comparison: each started pinned to the server CPUs on a loopback port,
//! waited for, and stopped with SIGTERM (then SIGKILL) when dropped.

use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::server_env::Env;

/// How long a server may take to accept connections (the transit servers bind only after
/// loading their feed, about a second in release).
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a server may take to exit after SIGTERM.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

/// A server under comparison: one of Moria's programs or a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Server {
    /// examples/techempower on PostgreSQL.
    MoriaTfb,
    /// bench/peers/hyper_tfb.
    HyperTfb,
    /// bench/peers/minihttp.rs.
    Minihttp,
    /// bench/peers/hyper_hello.rs.
    HyperHello,
    /// bench/src/bin/hello.rs.
    MoriaHello,
    /// examples/fileserver.
    MoriaFiles,
    /// bench/src/bin/hello.rs with `--no-metrics` (the metrics rows' baseline).
    MoriaHelloNoMetrics,
    /// examples/fileserver with `--no-metrics` (the metrics rows' baseline).
    MoriaFilesNoMetrics,
    /// nginx with the configuration written by `setup`.
    Nginx,
    /// examples/transit on the generated GTFS feed.
    MoriaTransit,
    /// bench/peers/transit_axum: the transit-lang-cmp Rust entry's design.
    TransitAxum,
    /// examples/echo's WebSocket echo (`--ws`).
    MoriaWsEcho,
    /// examples/chat: rooms relaying every message to every member.
    MoriaChat,
    /// bench/peers/ws_tokio.rs: tokio-tungstenite echo and rooms.
    WsTokio,
}

impl Server {
    /// The name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Server::MoriaTfb => "moria techempower",
            Server::HyperTfb => "hyper+tokio-postgres",
            Server::Minihttp => "may_minihttp",
            Server::HyperHello => "hyper",
            Server::MoriaHello => "moria hello",
            Server::MoriaFiles => "moria fileserver",
            Server::MoriaHelloNoMetrics => "moria hello, metrics off",
            Server::MoriaFilesNoMetrics => "moria fileserver, metrics off",
            Server::Nginx => "nginx",
            Server::MoriaTransit => "moria transit",
            Server::TransitAxum => "axum transit peer",
            Server::MoriaWsEcho => "moria echo --ws",
            Server::MoriaChat => "moria chat",
            Server::WsTokio => "tokio-tungstenite",
        }
    }

    /// The release binary it needs from this workspace (nginx comes from the system).
    pub fn binary(self) -> Option<&'static str> {
        match self {
            Server::MoriaTfb => Some("techempower"),
            Server::HyperTfb => Some("peer_hyper_tfb"),
            Server::Minihttp => Some("peer_minihttp"),
            Server::HyperHello => Some("peer_hyper_hello"),
            Server::MoriaHello | Server::MoriaHelloNoMetrics => Some("hello"),
            Server::MoriaFiles | Server::MoriaFilesNoMetrics => Some("fileserver"),
            Server::Nginx => None,
            Server::MoriaTransit => Some("transit"),
            Server::TransitAxum => Some("peer_transit_axum"),
            Server::MoriaWsEcho => Some("echo"),
            Server::MoriaChat => Some("chat"),
            Server::WsTokio => Some("peer_ws_tokio"),
        }
    }

    /// Whether it needs the PostgreSQL database.
    pub fn needs_db(self) -> bool {
        matches!(self, Server::MoriaTfb | Server::HyperTfb)
    }

    /// Whether it needs the generated GTFS feed.
    pub fn needs_gtfs(self) -> bool {
        matches!(self, Server::MoriaTransit | Server::TransitAxum)
    }
}

/// A running server.
pub struct Running {
    /// Which one.
    pub kind: Server,
    child: Child,
    /// Plain-HTTP address.
    pub http: SocketAddr,
    /// HTTPS address (file servers only).
    pub https: Option<SocketAddr>,
    /// Where it speaks h2c with prior knowledge (file servers only): the plain-HTTP port for
    /// Moria (it detects the preface), a port of its own for nginx 1.22 (whose `http2`
    /// cleartext listener speaks nothing else).
    pub h2c: Option<SocketAddr>,
}

/// An address for a server to listen on: the peers cannot report a port they picked.
fn free_addr() -> Result<SocketAddr, String> {
    moria_runtime::net::spare_port()
        .map(|port| SocketAddr::from(([127, 0, 0, 1], port)))
        .map_err(|e| format!("no free port: {e}"))
}

impl Running {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Starts `kind` and waits until its ports accept connections.
    pub fn start(kind: Server, env: &Env) -> Result<Running, String> {
        let http = free_addr()?;
        let https = matches!(
            kind,
            Server::MoriaFiles | Server::MoriaFilesNoMetrics | Server::Nginx
        )
        .then(free_addr)
        .transpose()?;
        let h2c = match kind {
            Server::Nginx => Some(free_addr()?),
            Server::MoriaFiles | Server::MoriaFilesNoMetrics => Some(http),
            _ => None,
        };
        let workers = env.workers.to_string();
        let h = http.to_string();
        let program = |name: &str| env.bin.join(name).display().to_string();
        // Every server but the file servers takes the same three flags, after its own `first`.
        let common = |name: &str, first: &[&str]| {
            let mut v = vec![program(name)];
            v.extend(first.iter().map(|a| a.to_string()));
            v.extend([
                "--listen".into(),
                h.clone(),
                "--workers".into(),
                workers.clone(),
            ]);
            v
        };
        let db = ["--db", env.pg_url.as_str()];
        let gtfs = env.gtfs.display().to_string();
        let gtfs = ["--gtfs", gtfs.as_str()];
        let mut argv: Vec<String> = match kind {
            Server::MoriaTfb => common("techempower", &db),
            Server::HyperTfb => common("peer_hyper_tfb", &db),
            Server::Minihttp => common("peer_minihttp", &[]),
            Server::HyperHello => common("peer_hyper_hello", &[]),
            Server::MoriaHello | Server::MoriaHelloNoMetrics => common("hello", &[]),
            Server::MoriaTransit => common("transit", &gtfs),
            Server::TransitAxum => common("peer_transit_axum", &gtfs),
            // Its room holds every member at once, the publisher too.
            Server::MoriaChat => common(
                "chat",
                &["--max-connections", &env.max_connections.to_string()],
            ),
            Server::WsTokio => common("peer_ws_tokio", &[]),
            // Its byte echo listens too (on a spare port); the WebSocket echo is measured.
            Server::MoriaWsEcho => vec![
                program("echo"),
                "--ws".into(),
                h,
                "--listen".into(),
                free_addr()?.to_string(),
                "--workers".into(),
                workers,
            ],
            Server::MoriaFiles | Server::MoriaFilesNoMetrics => vec![
                program("fileserver"),
                "--root".into(),
                env.www.display().to_string(),
                "--http".into(),
                h,
                "--https".into(),
                https.map(|a| a.to_string()).unwrap_or_default(),
                "--cert".into(),
                env.cert.display().to_string(),
                "--key".into(),
                env.key.display().to_string(),
                "--workers".into(),
                workers,
                "--max-connections".into(),
                env.max_connections.to_string(),
            ],
            Server::Nginx => {
                let conf = crate::setup::nginx_conf(
                    env,
                    http,
                    https.unwrap_or(http),
                    h2c.unwrap_or(http),
                )?;
                vec![
                    "nginx".into(),
                    "-c".into(),
                    conf.display().to_string(),
                    "-p".into(),
                    env.nginx_dir.display().to_string(),
                ]
            }
        };
        // The metrics rows' baselines: the same program with recording off.
        if matches!(
            kind,
            Server::MoriaHelloNoMetrics | Server::MoriaFilesNoMetrics
        ) {
            argv.push("--no-metrics".into());
        }
        let mut cmd = if env.cpus.is_empty() {
            Command::new(&argv[0])
        } else {
            let mut c = Command::new("taskset");
            c.arg("-c").arg(&env.cpus).arg(&argv[0]);
            c
        };
        cmd.args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .env("RUST_LOG", "warn");
        let child = cmd.spawn().map_err(|e| format!("{}: {e}", argv[0]))?;
        let mut running = Running {
            kind,
            child,
            http,
            https,
            h2c,
        };
        for addr in std::iter::once(http).chain(https).chain(h2c) {
            running.wait_ready(addr)?;
        }
        Ok(running)
    }

    fn wait_ready(&mut self, addr: SocketAddr) -> Result<(), String> {
        let start = Instant::now();
        loop {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("{} exited at start ({status})", self.kind.name()));
            }
            if start.elapsed() > START_TIMEOUT {
                return Err(format!("{} did not listen on {addr}", self.kind.name()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let pid = self.child.id() as i32;
        // SAFETY: signalling our own child, which has not been reaped yet.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let start = Instant::now();
        while start.elapsed() < STOP_TIMEOUT {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The status code of `GET url` (via curl; `-k` for the self-signed certificate), over h2c with
/// prior knowledge if `h2c`.
pub fn status_of(url: &str, h2c: bool) -> Result<u16, String> {
    let mut curl = Command::new("curl");
    if h2c {
        curl.arg("--http2-prior-knowledge");
    }
    let out = curl
        .args([
            "-sk",
            "--max-time",
            "10",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            url,
        ])
        .output()
        .map_err(|e| format!("curl: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|_| format!("curl could not fetch {url}"))
}
