//! Everything the servers need, made once in a temporary directory: the static files (1312
//! bytes like Mordor's siege test, and 1 GiB), a self-signed certificate shared by Moria and
//! nginx, nginx's and siege's configuration, and a throwaway PostgreSQL filled by
//! `techempower --init`.

use std::fs;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use moria_orm::pg::TestServer;
use serde::Serialize;

use crate::server_env::Env;

/// The small static file: the size of Mordor's siege benchmark file.
pub const SMALL_FILE: &str = "file1312";
/// Its size in bytes.
pub const SMALL_SIZE: u64 = 1312;
/// The large static file (sparse: the server path is measured, not the disk).
pub const BIG_FILE: &str = "file1g";
/// Its size in bytes.
pub const BIG_SIZE: u64 = 1 << 30;

/// A certificate the HTTPS servers present (both of a scenario get the same one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Cert {
    /// ECDSA P-256, self-signed (`cert.pem`): every HTTPS row but the RSA handshake rows.
    P256,
    /// RSA-2048, self-signed (`rsa-cert.pem`).
    Rsa2048,
}

/// The prepared directory and database; removed on drop.
pub struct Setup {
    /// The temporary directory.
    pub dir: tempfile::TempDir,
    /// The throwaway PostgreSQL, when a scenario needs it.
    pub pg: Option<TestServer>,
    /// The siege configuration.
    pub siegerc: PathBuf,
}

fn io(what: &Path, e: std::io::Error) -> String {
    format!("{}: {e}", what.display())
}

fn write(path: &Path, data: &[u8]) -> Result<(), String> {
    fs::write(path, data).map_err(|e| io(path, e))
}

/// Makes the directory, the files, the certificate and (with `db`) the database.
pub fn prepare(bin: &Path, db: bool) -> Result<Setup, String> {
    let dir = tempfile::Builder::new()
        .prefix("moria-compare.")
        .tempdir()
        .map_err(|e| format!("temp dir: {e}"))?;
    let root = dir.path();
    let www = root.join("www");
    fs::create_dir_all(&www).map_err(|e| io(&www, e))?;
    fs::create_dir_all(root.join("nginx")).map_err(|e| io(root, e))?;
    // nginx workers run as an unprivileged user.
    for d in [root, &www] {
        let _ = Command::new("chmod").arg("755").arg(d).status();
    }
    let mut small = vec![0u8; SMALL_SIZE as usize];
    moria_crypto::random_bytes(&mut small).map_err(|e| format!("random bytes: {e}"))?;
    write(&www.join(SMALL_FILE), &small)?;
    let big = www.join(BIG_FILE);
    fs::File::create(&big)
        .and_then(|f| f.set_len(BIG_SIZE))
        .map_err(|e| io(&big, e))?;
    let id = moria_crypto::Identity::self_signed(&["localhost", "127.0.0.1"])
        .map_err(|e| format!("certificate: {e}"))?;
    write(
        &root.join("cert.pem"),
        &id.certificate_pem().map_err(|e| e.to_string())?,
    )?;
    write(
        &root.join("key.pem"),
        &id.private_key_pem().map_err(|e| e.to_string())?,
    )?;
    let rsa_key = moria_crypto::keys::PrivateKey::generate("rsa-2048")
        .map_err(|e| format!("RSA key: {e}"))?;
    let rsa_cert = moria_crypto::x509::CertBuilder::new("localhost")
        .hosts(&["localhost", "127.0.0.1"])
        .usage(moria_crypto::x509::Usage::TlsServer)
        .self_signed(&rsa_key)
        .and_then(|c| c.to_pem())
        .map_err(|e| format!("RSA certificate: {e}"))?;
    write(&root.join("rsa-cert.pem"), &rsa_cert)?;
    write(
        &root.join("rsa-key.pem"),
        &rsa_key.to_pem().map_err(|e| e.to_string())?,
    )?;
    let siegerc = root.join("siegerc");
    write(
        &siegerc,
        b"verbose = false\nquiet = true\njson_output = true\nshow-logfile = false\n\
          logging = false\nparser = false\nlimit = 1000\nprotocol = HTTP/1.1\n\
          connection = close\n",
    )?;
    if !db {
        return Ok(Setup {
            dir,
            pg: None,
            siegerc,
        });
    }
    let pg = TestServer::start()?;
    let init = Command::new(bin.join("techempower"))
        .args(["--db", &pg.url(), "--init"])
        .output()
        .map_err(|e| format!("techempower --init: {e}"))?;
    if !init.status.success() {
        return Err(format!(
            "techempower --init failed: {}",
            String::from_utf8_lossy(&init.stderr)
        ));
    }
    Ok(Setup {
        dir,
        pg: Some(pg),
        siegerc,
    })
}

impl Setup {
    /// The server environment for `workers` workers pinned to `cpus`, file servers accepting
    /// `max_connections` at once.
    pub fn env(&self, bin: &Path, cpus: &str, workers: usize, max_connections: usize) -> Env {
        let root = self.dir.path();
        Env {
            bin: bin.to_owned(),
            cpus: cpus.to_owned(),
            workers,
            max_connections,
            pg_url: self.pg.as_ref().map_or_else(String::new, TestServer::url),
            www: root.join("www"),
            cert: root.join("cert.pem"),
            key: root.join("key.pem"),
            rsa_cert: root.join("rsa-cert.pem"),
            rsa_key: root.join("rsa-key.pem"),
            nginx_dir: root.join("nginx"),
            gtfs: PathBuf::new(),
        }
    }

    /// The postmaster's process id (to pin PostgreSQL with the servers).
    pub fn pg_pid(&self) -> Option<u32> {
        let f = self.pg.as_ref()?.socket_dir().join("data/postmaster.pid");
        fs::read_to_string(f)
            .ok()?
            .lines()
            .next()?
            .trim()
            .parse()
            .ok()
    }
}

/// File descriptors an nginx worker gets beyond one per connection (listeners, logs, files
/// being sent).
const NGINX_SPARE_FDS: usize = 1024;

/// Writes nginx's configuration, set up like the file server: `workers` processes, sendfile,
/// no access log, unlimited keep-alive requests (HTTP/2 streams too), TLS 1.3 with the shared
/// certificate and ALPN `h2`, h2c with prior knowledge on `h2c`, and `max_connections`
/// connections per worker (with file descriptors to spare for them).
///
/// The h2c listener has a server of its own with `sendfile off`: nginx 1.22 sends each HTTP/2
/// DATA frame from a file by turning `TCP_NODELAY` off and corking the connection (whatever
/// `tcp_nopush` says), so after the uncork Nagle holds the small frame behind the unacknowledged
/// HEADERS frame until the client's delayed ACK, 40 ms later (bench/README.md, "nginx and h2c").
/// Without sendfile it writes the frame from memory with `TCP_NODELAY` on, as it does over TLS,
/// where sendfile never applies.
pub fn nginx_conf(
    env: &Env,
    http: SocketAddr,
    https: SocketAddr,
    h2c: SocketAddr,
) -> Result<PathBuf, String> {
    let d = &env.nginx_dir;
    let conf = format!(
        "worker_processes {workers};\ndaemon off;\npid {d}/nginx.pid;\n\
         error_log {d}/error.log warn;\nworker_rlimit_nofile {nofile};\n\
         events {{ worker_connections {conns}; multi_accept on; }}\n\
         http {{\n  access_log off;\n  sendfile on;\n  tcp_nopush on;\n\
         keepalive_timeout 60s;\n  keepalive_requests 100000000;\n\
         ssl_protocols TLSv1.3;\n  ssl_certificate {cert};\n  ssl_certificate_key {key};\n\
         client_body_temp_path {d};\n  types {{ application/octet-stream bin; }}\n\
         default_type application/octet-stream;\n\
         server {{\n    listen {http} backlog=4096;\n    listen {https} ssl http2 backlog=4096;\n\
         \x20   root {www};\n  }}\n\
         server {{\n    listen {h2c} http2 backlog=4096;\n    sendfile off;\n\
         \x20   root {www};\n  }}\n}}\n",
        workers = env.workers,
        conns = env.max_connections,
        nofile = env.max_connections + NGINX_SPARE_FDS,
        d = d.display(),
        cert = env.cert.display(),
        key = env.key.display(),
        www = env.www.display(),
    );
    let path = d.join("nginx.conf");
    let mut f = fs::File::create(&path).map_err(|e| io(&path, e))?;
    f.write_all(conf.as_bytes()).map_err(|e| io(&path, e))?;
    Ok(path)
}
