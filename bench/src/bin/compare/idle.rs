//! The memory rows: resident memory per idle keep-alive connection. For each server, started
//! fresh for every run: one warm-up connection does one GET and stays open; the server's RSS is
//! read (VmRSS of its whole process tree: for nginx the master and its worker summed); then N
//! connections each do one GET of the small file, read the whole response and stay open and
//! idle, half of them first, RSS read after each half; the row is (after − before) / N bytes,
//! and beside it what the second half cost, (after − halfway) / (N − N/2): the marginal cost of
//! a connection, without what a server spends once whatever the count (Moria's pooled fiber
//! stacks, touched as the first connections are served). Every connection is then closed and
//! the server stopped.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::load::Load;
use crate::machine;
use crate::procstat;
use crate::scenario::Scenario;
use crate::server::{Running, Server};
use crate::server_env::Env;
use crate::wire::{self, Client, Conn};

/// Longest the N connections may take to open: well under both servers' 60-second keep-alive
/// timeout, so that none has been closed for idleness when RSS is read.
const OPEN_BOUND: Duration = Duration::from_secs(45);
/// Client threads opening connections (TLS handshakes overlap; the server has one worker).
const OPEN_THREADS: usize = 4;
/// File descriptors a process needs beyond one per connection.
pub const SPARE_FDS: u64 = 64;
/// RSS is read until two reads this far apart agree…
const SETTLE_POLL: Duration = Duration::from_millis(200);
/// …or this long has passed.
const SETTLE_BOUND: Duration = Duration::from_secs(3);

/// One run of one server.
#[derive(Clone, Debug, Serialize)]
pub struct IdleRun {
    /// Resident memory with the warm-up connection open, KiB.
    pub kib_before: u64,
    /// Resident memory with the first half of the connections open and idle, KiB.
    pub kib_half: u64,
    /// Resident memory with every connection open and idle, KiB.
    pub kib_after: u64,
    /// Memory maps before and after (each fiber stack the server keeps adds two).
    pub maps: (u64, u64),
    /// Open descriptors before and after (each held connection adds one).
    pub fds: (u64, u64),
    /// Seconds the connections took to open and do their GET.
    pub open_s: f64,
    /// (after − before) / connections, bytes.
    pub bytes_per_conn: f64,
    /// (after − halfway) / the second half's connections, bytes.
    pub marginal_bytes_per_conn: f64,
}

/// One server in one memory scenario.
#[derive(Clone, Debug, Serialize)]
pub struct IdleResult {
    /// Which server.
    pub kind: Server,
    /// The good runs.
    pub runs: Vec<IdleRun>,
    /// Why the other runs have no result.
    pub failures: Vec<String>,
}

/// One memory scenario: Moria first, then nginx.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryResult {
    /// The scenario.
    pub scenario: Scenario,
    /// Connections held per run.
    pub conns: u32,
    /// Moria, then each peer.
    pub servers: Vec<IdleResult>,
}

/// Runs scenario `s` (a [`Load::Idle`] one) `runs` times, servers taking turns.
pub fn run(s: &Scenario, env: &Env, runs: usize) -> MemoryResult {
    let conns = match s.load {
        Load::Idle { conns } => conns,
        _ => 0,
    };
    let mut servers: Vec<IdleResult> = s
        .servers()
        .into_iter()
        .map(|kind| IdleResult {
            kind,
            runs: Vec::new(),
            failures: Vec::new(),
        })
        .collect();
    for i in 0..runs {
        for res in servers.iter_mut() {
            match measure(res.kind, s, env, conns) {
                Ok(r) => {
                    eprintln!(
                        "  {} run {}: {:<18} {:>8.0} B/conn ({:.0} the second half)  RSS {} -> {} -> {} KiB  maps {} -> {}  fds {} -> {}  opened in {:.1} s",
                        s.name, i + 1, res.kind.name(), r.bytes_per_conn, r.marginal_bytes_per_conn,
                        r.kib_before, r.kib_half, r.kib_after, r.maps.0, r.maps.1, r.fds.0, r.fds.1,
                        r.open_s
                    );
                    res.runs.push(r);
                }
                Err(e) => {
                    eprintln!("  {} run {}: {}: {e}", s.name, i + 1, res.kind.name());
                    res.failures.push(e);
                }
            }
        }
    }
    MemoryResult {
        scenario: s.clone(),
        conns,
        servers,
    }
}

/// The processes that hold the connections: nginx's workers, or the server itself.
fn serving(pid: u32) -> Vec<u32> {
    let tree = procstat::tree(pid);
    if tree.len() > 1 {
        tree[1..].to_vec()
    } else {
        tree
    }
}

/// RSS once two reads [`SETTLE_POLL`] apart agree (connections finish parking after their
/// response is read), or after [`SETTLE_BOUND`].
fn settled_rss(pid: u32) -> u64 {
    let start = Instant::now();
    let mut last = procstat::rss_kib(pid);
    while start.elapsed() < SETTLE_BOUND {
        std::thread::sleep(SETTLE_POLL);
        let now = procstat::rss_kib(pid);
        if now == last {
            break;
        }
        last = now;
    }
    last
}

fn measure(kind: Server, s: &Scenario, env: &Env, conns: u32) -> Result<IdleRun, String> {
    let server = Running::start(kind, env)?;
    let pid = server.pid();
    for p in serving(pid) {
        let have = machine::nofile_of(p).unwrap_or(0);
        machine::check_nofile(kind.name(), have, u64::from(conns) + SPARE_FDS)?;
    }
    let addr = match (s.https, server.https) {
        (false, _) => server.http,
        (true, Some(a)) => a,
        (true, None) => return Err("no HTTPS port".into()),
    };
    let client = Client::new(s.https)?;
    let mut warm = client
        .connect(addr)
        .map_err(|e| format!("warm-up connection: {e}"))?;
    wire::get(&mut *warm, &s.path, false).map_err(|e| format!("warm-up GET: {e}"))?;
    let kib_before = settled_rss(pid);
    let maps_before = procstat::maps(pid);
    let fds_before = procstat::fds(pid);
    let start = Instant::now();
    let half = conns / 2;
    let first = open(&client, addr, &s.path, half)?;
    let mut open_s = start.elapsed().as_secs_f64();
    let kib_half = settled_rss(pid);
    let start = Instant::now();
    let second = open(&client, addr, &s.path, conns - half)?;
    open_s += start.elapsed().as_secs_f64();
    let kib_after = settled_rss(pid);
    let maps_after = procstat::maps(pid);
    let fds_after = procstat::fds(pid);
    if fds_after < fds_before + u64::from(conns) {
        return Err(format!(
            "the server holds {} more descriptors, not {conns}: connections were closed",
            fds_after.saturating_sub(fds_before)
        ));
    }
    drop((first, second));
    drop(warm);
    drop(server);
    Ok(IdleRun {
        kib_before,
        kib_after,
        maps: (maps_before, maps_after),
        fds: (fds_before, fds_after),
        open_s,
        bytes_per_conn: (kib_after as f64 - kib_before as f64) * 1024.0 / f64::from(conns),
        marginal_bytes_per_conn: (kib_after as f64 - kib_half as f64) * 1024.0
            / f64::from((conns - half).max(1)),
        kib_half,
    })
}

/// Opens `conns` connections to `addr` on [`OPEN_THREADS`] threads, each doing one GET of
/// `path`; all of them, or why not within [`OPEN_BOUND`].
fn open(
    client: &Client,
    addr: SocketAddr,
    path: &str,
    conns: u32,
) -> Result<Vec<Box<dyn Conn>>, String> {
    let deadline = Instant::now() + OPEN_BOUND;
    let failed = AtomicBool::new(false);
    let per = |t: usize| {
        let (n, t) = (conns as usize, t);
        n / OPEN_THREADS + usize::from(t < n % OPEN_THREADS)
    };
    let parts: Vec<Result<Vec<Box<dyn Conn>>, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..OPEN_THREADS)
            .map(|t| {
                let failed = &failed;
                scope.spawn(move || {
                    let mut mine = Vec::with_capacity(per(t));
                    for _ in 0..per(t) {
                        if failed.load(Ordering::Relaxed) {
                            return Err(String::new());
                        }
                        if Instant::now() > deadline {
                            failed.store(true, Ordering::Relaxed);
                            return Err(format!(
                                "not all {conns} connections opened within {} s",
                                OPEN_BOUND.as_secs()
                            ));
                        }
                        let got = client
                            .connect(addr)
                            .and_then(|mut c| wire::get(&mut *c, path, false).map(|_| c));
                        match got {
                            Ok(c) => mine.push(c),
                            Err(e) => {
                                failed.store(true, Ordering::Relaxed);
                                return Err(format!("connection {}: {e}", mine.len() + 1));
                            }
                        }
                    }
                    Ok(mine)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("client thread panicked".into()))
            })
            .collect()
    });
    let mut all = Vec::with_capacity(conns as usize);
    let mut errors = Vec::new();
    for p in parts {
        match p {
            Ok(v) => all.extend(v),
            Err(e) if !e.is_empty() => errors.push(e),
            Err(_) => {}
        }
    }
    if errors.is_empty() {
        Ok(all)
    } else {
        Err(errors.join("; "))
    }
}
