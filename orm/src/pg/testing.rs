//! [`TestServer`]: a throwaway PostgreSQL server for tests and benches.
//!
//! It runs Debian's `postgresql` binaries (`initdb`, `postgres`): a data directory under the
//! system temp dir initialised with SCRAM authentication, the server on a free loopback port
//! and on a Unix socket in that directory, TLS on with a self-signed certificate, durability
//! off (it is thrown away). As root it runs the server as an unprivileged user through
//! `runuser` (PostgreSQL refuses root). A watchdog shell stops the server and removes the
//! directory when the process that started it exits, so `static` servers are cleaned up too.
//! Missing binaries are an error naming the package to install — never a silent skip.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use moria_runtime::net::spare_port;

use super::config::{Config, Host, SslMode};

/// The role the test server is initialised with (a superuser).
pub const TEST_USER: &str = "moria";
/// Roles the test server's `pg_hba.conf` sends through MD5 and cleartext-password
/// authentication (the tests create them).
pub const TEST_MD5_USER: &str = "moria_md5";
/// See [`TEST_MD5_USER`].
pub const TEST_CLEARTEXT_USER: &str = "moria_clear";
/// How long the server may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Ports tried when the one picked is taken before the server binds it (by a process outside
/// this one: within it, [`spare_port`] never repeats).
const PORT_ATTEMPTS: usize = 3;

/// A running throwaway PostgreSQL; stopped and deleted on drop.
#[derive(Debug)]
pub struct TestServer {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    password: String,
    run_as: Option<String>,
}

fn missing() -> String {
    "PostgreSQL server binaries (initdb, postgres) not found: install Debian's `postgresql` \
     package (apt-get install postgresql), or set MORIA_PG_BIN to the directory holding them"
        .into()
}

/// The directory holding `initdb` and `postgres`.
fn find_bin() -> Result<PathBuf, String> {
    if let Ok(d) = std::env::var("MORIA_PG_BIN") {
        let d = PathBuf::from(d);
        return if d.join("postgres").exists() {
            Ok(d)
        } else {
            Err(missing())
        };
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            (bin.join("initdb").exists() && bin.join("postgres").exists()).then_some((v, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Ok(bin);
    }
    for dir in std::env::var("PATH").unwrap_or_default().split(':') {
        let d = Path::new(dir);
        if d.join("initdb").exists() && d.join("postgres").exists() {
            return Ok(d.to_owned());
        }
    }
    Err(missing())
}

fn run(cmd: &mut Command, what: &str) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{what}: cannot run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Process ids whose parent is `pid` (from /proc).
fn children_of(pid: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid …: the comm may hold spaces, so split after the last ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .unwrap_or_default();
        if ppid == pid {
            out.push(name);
        }
    }
    out
}

fn is_zombie(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next().map(|st| st == "Z"))
        })
        .unwrap_or(true)
}

impl TestServer {
    /// The server shared by the whole test process, started on first use. Panics with the
    /// reason (naming the package to install) when it cannot start.
    pub fn shared() -> &'static TestServer {
        static SHARED: OnceLock<Result<TestServer, String>> = OnceLock::new();
        match SHARED.get_or_init(TestServer::start) {
            Ok(s) => s,
            Err(e) => panic!("cannot start the test PostgreSQL: {e}"),
        }
    }

    /// Initialises a new data directory and starts a server on it.
    pub fn start() -> Result<TestServer, String> {
        static N: AtomicUsize = AtomicUsize::new(0);
        let bin = find_bin()?;
        let dir = std::env::temp_dir().join(format!(
            "moria-pg-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let password = format!("pw-{:x}", {
            let mut b = [0u8; 8];
            let _ = moria_crypto::random_bytes(&mut b);
            u64::from_le_bytes(b)
        });
        let run_as = if is_root() {
            let user = if Command::new("id")
                .arg("-u")
                .arg("postgres")
                .output()
                .is_ok_and(|o| o.status.success())
            {
                "postgres"
            } else {
                "nobody"
            };
            Some(user.to_owned())
        } else {
            None
        };
        let mut server = TestServer {
            port: 0,
            dir,
            bin,
            password,
            run_as,
        };
        server.init()?;
        let mut attempt = 1;
        loop {
            server.port = spare_port().map_err(|e| format!("no free port: {e}"))?;
            match server.launch() {
                Err(e) if e.contains("Address already in use") && attempt < PORT_ATTEMPTS => {
                    attempt += 1
                }
                done => return done.map(|()| server),
            }
        }
    }

    fn command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.arg("-u").arg(user).arg("--").arg(exe);
                c
            }
            None => Command::new(exe),
        }
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn init(&self) -> Result<(), String> {
        let pwfile = self.dir.join("pwfile");
        std::fs::write(&pwfile, &self.password).map_err(|e| e.to_string())?;
        let id = moria_crypto::Identity::self_signed(&["localhost", "127.0.0.1"])
            .map_err(|e| format!("test certificate: {e}"))?;
        let cert = id.certificate_pem().map_err(|e| e.to_string())?;
        let key = id.private_key_pem().map_err(|e| e.to_string())?;
        std::fs::write(self.dir.join("server.crt"), cert).map_err(|e| e.to_string())?;
        std::fs::write(self.dir.join("server.key"), key).map_err(|e| e.to_string())?;
        run(
            Command::new("chmod")
                .arg("600")
                .arg(self.dir.join("server.key")),
            "chmod",
        )?;
        if let Some(user) = &self.run_as {
            run(
                Command::new("chown").arg("-R").arg(user).arg(&self.dir),
                "chown",
            )?;
        }
        run(
            self.command("initdb")
                .arg("-D")
                .arg(self.data())
                .arg("-U")
                .arg(TEST_USER)
                .arg("--pwfile")
                .arg(&pwfile)
                .arg("--auth=scram-sha-256")
                .arg("-E")
                .arg("UTF8")
                .arg("--locale=C")
                .arg("--no-sync"),
            "initdb",
        )?;
        let hba = format!(
            "local all all scram-sha-256\n\
             host all {TEST_MD5_USER} 127.0.0.1/32 md5\n\
             host all {TEST_CLEARTEXT_USER} 127.0.0.1/32 password\n\
             host all all 127.0.0.1/32 scram-sha-256\n\
             host all all ::1/128 scram-sha-256\n"
        );
        let mut f =
            std::fs::File::create(self.data().join("pg_hba.conf")).map_err(|e| e.to_string())?;
        f.write_all(hba.as_bytes()).map_err(|e| e.to_string())?;
        Ok(())
    }

    fn launch(&self) -> Result<(), String> {
        let log = self.dir.join("server.log");
        let _ = std::fs::remove_file(&log);
        if let Some(user) = &self.run_as {
            let _ = Command::new("chown").arg(user).arg(&self.dir).status();
        }
        let mut args: Vec<String> = vec![
            "-D".into(),
            self.data().display().to_string(),
            "-p".into(),
            self.port.to_string(),
            "-k".into(),
            self.dir.display().to_string(),
        ];
        for setting in [
            "listen_addresses=127.0.0.1".to_owned(),
            "ssl=on".to_owned(),
            format!("ssl_cert_file={}", self.dir.join("server.crt").display()),
            format!("ssl_key_file={}", self.dir.join("server.key").display()),
            "fsync=off".to_owned(),
            "synchronous_commit=off".to_owned(),
            "full_page_writes=off".to_owned(),
            "max_connections=300".to_owned(),
            "shared_buffers=64MB".to_owned(),
            "logging_collector=off".to_owned(),
        ] {
            args.push("-c".into());
            args.push(setting);
        }
        let runas = match &self.run_as {
            Some(u) => format!("runuser -u {u} -- "),
            None => String::new(),
        };
        let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
        // The watchdog: when the test process is gone, stop the server and delete its files.
        let script = format!(
            "{runas}'{pg}' {args} >>'{log}' 2>&1 & w=$!\n\
             while kill -0 $w 2>/dev/null; do\n\
               if [ ! -d /proc/{parent} ]; then\n\
                 kill -INT $(head -1 '{data}/postmaster.pid' 2>/dev/null) 2>/dev/null; wait $w\n\
                 rm -rf '{dir}'; exit 0\n\
               fi\n\
               sleep 0.5\n\
             done\n",
            pg = self.bin.join("postgres").display(),
            args = quoted.join(" "),
            log = log.display(),
            parent = std::process::id(),
            data = self.data().display(),
            dir = self.dir.display(),
        );
        Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start postgres: {e}"))?;
        let start = Instant::now();
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.contains("ready to accept connections") {
                return Ok(());
            }
            // Clients turned away during startup or recovery log FATAL too; those are not
            // the server failing.
            let failed = text
                .lines()
                .any(|l| l.contains("FATAL") && !l.contains("the database system is"));
            if failed || start.elapsed() > START_TIMEOUT {
                return Err(format!("postgres did not start: {text}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn postmaster_pid(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.data().join("postmaster.pid")).ok()?;
        text.lines().next().map(str::to_owned)
    }

    /// Stops the server (fast shutdown: sessions are terminated) and waits for it.
    pub fn stop(&self) {
        if let Some(pid) = self.postmaster_pid() {
            let _ = Command::new("kill").arg("-INT").arg(&pid).status();
            let start = Instant::now();
            while self.data().join("postmaster.pid").exists()
                && start.elapsed() < Duration::from_secs(30)
            {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// Kills the server without a shutdown (SIGKILL to the postmaster: its sessions die with
    /// their sockets), then starts it again on the same port and data.
    pub fn crash_and_restart(&self) -> Result<(), String> {
        if let Some(pid) = self.postmaster_pid() {
            let children = children_of(&pid);
            let _ = Command::new("kill").arg("-KILL").arg(&pid).status();
            for c in &children {
                let _ = Command::new("kill").arg("-KILL").arg(c).status();
            }
            let start = Instant::now();
            while std::iter::once(&pid)
                .chain(&children)
                .any(|p| Path::new(&format!("/proc/{p}")).exists() && !is_zombie(p))
                && start.elapsed() < Duration::from_secs(30)
            {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = std::fs::remove_file(self.data().join("postmaster.pid"));
        self.launch()
    }

    /// Stops the server and starts it again on the same port and data.
    pub fn restart(&self) -> Result<(), String> {
        self.stop();
        self.launch()
    }

    /// The TCP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The superuser's password.
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The directory holding the Unix socket.
    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// The server's certificate (PEM file), for `sslrootcert` with `verify-full`.
    pub fn certificate(&self) -> PathBuf {
        self.dir.join("server.crt")
    }

    /// Settings for TCP to 127.0.0.1 as the superuser, database `dbname`, TLS off.
    pub fn config(&self, dbname: &str) -> Config {
        Config {
            host: Host::Tcp("127.0.0.1".into()),
            port: self.port,
            user: TEST_USER.into(),
            password: Some(self.password.clone()),
            dbname: dbname.into(),
            sslmode: Some(SslMode::Disable),
            ..Config::default()
        }
    }

    /// Settings for the Unix socket as the superuser, database `dbname`.
    pub fn unix_config(&self, dbname: &str) -> Config {
        Config {
            host: Host::Unix(self.dir.clone()),
            sslmode: None,
            ..self.config(dbname)
        }
    }

    /// A `postgres://` URL for TCP (TLS off) to database `postgres`.
    pub fn url(&self) -> String {
        format!(
            "postgres://{TEST_USER}:{}@127.0.0.1:{}/postgres?sslmode=disable",
            self.password, self.port
        )
    }

    /// A `postgres://` URL for the Unix socket to database `postgres`.
    pub fn unix_url(&self) -> String {
        format!(
            "postgres://{TEST_USER}:{}@{}:{}/postgres",
            self.password,
            self.dir.display().to_string().replace('/', "%2F"),
            self.port
        )
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
