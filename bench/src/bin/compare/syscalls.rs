//! Syscall counts (`compare --syscalls`, run by `bench/syscalls.sh`): `strace -c -f` attached to
//! the file server and to nginx, one worker each, while an exact number of requests of the
//! small file is served: (a) 10,000 keep-alive requests over 100 connections, (b) 10,000
//! connections of one request each (`Connection: close`). Counts are divided by requests (a)
//! or connections (b). strace slows a server many times over: only the counts mean anything.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::procstat;
use crate::server::{Running, Server};
use crate::server_env::Env;
use crate::setup::SMALL_FILE;
use crate::wire::{self, Client};

/// Requests (and, closing, connections) per count.
pub const REQUESTS: u32 = 10_000;
/// Concurrent client connections.
pub const CONNS: u32 = 100;
/// Longest strace may take to attach to every thread.
const ATTACH_BOUND: Duration = Duration::from_secs(10);
/// Longest strace may take to detach and write its summary.
const DETACH_BOUND: Duration = Duration::from_secs(30);
/// Poll interval while waiting for strace.
const POLL: Duration = Duration::from_millis(20);

/// How the requests arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Mode {
    /// [`CONNS`] connections, each sending its share of the requests one after another.
    KeepAlive,
    /// One connection per request, `Connection: close`, [`CONNS`] at a time.
    Close,
}

impl Mode {
    /// The table's heading.
    pub fn title(self) -> String {
        match self {
            Mode::KeepAlive => format!(
                "per request: {REQUESTS} keep-alive requests of the 1312-byte file over {CONNS} connections"
            ),
            Mode::Close => format!(
                "per connection: {REQUESTS} connections of one request each (`Connection: close`), {CONNS} at a time"
            ),
        }
    }
}

/// One syscall's line of strace's summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Count {
    /// Syscall name.
    pub name: String,
    /// Calls.
    pub calls: u64,
    /// Calls that failed (EAGAIN included).
    pub errors: u64,
}

/// One server's counts under one mode.
#[derive(Clone, Debug, Serialize)]
pub struct Counted {
    /// Which server.
    pub kind: Server,
    /// How the requests came.
    pub mode: Mode,
    /// Requests served while counting.
    pub requests: u32,
    /// strace's lines, `total` left out.
    pub counts: Vec<Count>,
}

/// Counts both servers under both modes; `dir` holds strace's output files.
pub fn run(env: &Env, dir: &Path) -> Vec<Result<Counted, String>> {
    let mut out = Vec::new();
    for mode in [Mode::KeepAlive, Mode::Close] {
        for kind in [Server::MoriaFiles, Server::Nginx] {
            let got = count(kind, mode, env, dir);
            match &got {
                Ok(c) => eprintln!(
                    "  {:?} {}: {} syscalls for {} requests",
                    mode,
                    kind.name(),
                    c.counts.iter().map(|c| c.calls).sum::<u64>(),
                    c.requests
                ),
                Err(e) => eprintln!("  {mode:?} {}: {e}", kind.name()),
            }
            out.push(got);
        }
    }
    out
}

fn count(kind: Server, mode: Mode, env: &Env, dir: &Path) -> Result<Counted, String> {
    let server = Running::start(kind, env)?;
    let path = format!("/{SMALL_FILE}");
    // Warm up outside the count: the file's metadata, pools, TLS-free code paths.
    load(server.http, &path, Mode::KeepAlive, 10, 100)?;
    load(server.http, &path, Mode::Close, 10, 100)?;
    let pids = procstat::tree(server.pid());
    let file = dir.join(format!(
        "strace-{}-{mode:?}.txt",
        kind.binary().unwrap_or("nginx")
    ));
    let mut cmd = Command::new("strace");
    cmd.args(["-c", "-f", "-q", "-o"]).arg(&file);
    for p in &pids {
        cmd.arg("-p").arg(p.to_string());
    }
    let mut strace = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("strace: {e}"))?;
    let served = wait_attached(&pids, &mut strace)
        .and_then(|()| load(server.http, &path, mode, CONNS, REQUESTS));
    detach(&mut strace)?;
    let requests = served?;
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(Counted {
        kind,
        mode,
        requests,
        counts: parse(&text)?,
    })
}

/// Waits until every thread of `pids` has strace as its tracer.
fn wait_attached(pids: &[u32], strace: &mut Child) -> Result<(), String> {
    let tracer = strace.id().to_string();
    let start = Instant::now();
    loop {
        let traced = pids.iter().all(|p| {
            std::fs::read_dir(format!("/proc/{p}/task"))
                .into_iter()
                .flatten()
                .flatten()
                .all(|t| {
                    std::fs::read_to_string(t.path().join("status")).is_ok_and(|s| {
                        s.lines()
                            .find_map(|l| l.strip_prefix("TracerPid:"))
                            .is_some_and(|v| v.trim() == tracer)
                    })
                })
        });
        if traced {
            return Ok(());
        }
        if let Ok(Some(st)) = strace.try_wait() {
            return Err(format!(
                "strace exited ({st}) before attaching: ptrace may be forbidden here"
            ));
        }
        if start.elapsed() > ATTACH_BOUND {
            return Err("strace did not attach to every thread".into());
        }
        std::thread::sleep(POLL);
    }
}

/// Stops strace with SIGINT (it detaches and writes its summary) and waits for it.
fn detach(strace: &mut Child) -> Result<(), String> {
    // SAFETY: signalling our own child, which has not been reaped yet.
    unsafe { libc::kill(strace.id() as i32, libc::SIGINT) };
    let start = Instant::now();
    while start.elapsed() < DETACH_BOUND {
        if let Ok(Some(_)) = strace.try_wait() {
            return Ok(());
        }
        std::thread::sleep(POLL);
    }
    let _ = strace.kill();
    let _ = strace.wait();
    Err("strace did not detach in time".into())
}

/// Sends exactly `requests` GETs of `path` on `conns` threads, as `mode` says; the number
/// served.
fn load(
    addr: std::net::SocketAddr,
    path: &str,
    mode: Mode,
    conns: u32,
    requests: u32,
) -> Result<u32, String> {
    let client = Client::new(false)?;
    let share = |t: u32| requests / conns + u32::from(t < requests % conns);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..conns)
            .map(|t| {
                let client = &client;
                scope.spawn(move || -> Result<u32, String> {
                    let n = share(t);
                    let err = |e: std::io::Error| format!("client {t}: {e}");
                    match mode {
                        Mode::KeepAlive => {
                            let mut c = client.connect(addr).map_err(err)?;
                            for _ in 0..n {
                                wire::get(&mut *c, path, false).map_err(err)?;
                            }
                        }
                        Mode::Close => {
                            for _ in 0..n {
                                let mut c = client.connect(addr).map_err(err)?;
                                wire::get(&mut *c, path, true).map_err(err)?;
                            }
                        }
                    }
                    Ok(n)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("client thread panicked".into()))
            })
            .sum()
    })
}

/// Parses `strace -c`'s summary: `% time  seconds  usecs/call  calls  [errors]  syscall`.
pub fn parse(text: &str) -> Result<Vec<Count>, String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() < 5 || w[0].parse::<f64>().is_err() {
            continue;
        }
        let name = w[w.len() - 1];
        if name == "total" {
            continue;
        }
        let num = |s: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("strace line {line:?}"))
        };
        out.push(Count {
            name: name.to_owned(),
            calls: num(w[3])?,
            errors: if w.len() >= 6 { num(w[4])? } else { 0 },
        });
    }
    if out.is_empty() {
        return Err(format!("no counts in strace's summary: {text}"));
    }
    Ok(out)
}

/// One table per mode: calls per request by syscall (failed calls in brackets from 0.005 per
/// request up), Moria beside nginx.
pub fn table(results: &[Counted]) -> String {
    let mut out = String::new();
    for mode in [Mode::KeepAlive, Mode::Close] {
        let of = |k: Server| results.iter().find(|c| c.kind == k && c.mode == mode);
        let (Some(m), Some(n)) = (of(Server::MoriaFiles), of(Server::Nginx)) else {
            continue;
        };
        let per = |c: &Counted, name: &str| {
            c.counts
                .iter()
                .find(|x| x.name == name)
                .map_or((0.0, 0.0), |x| {
                    let r = f64::from(c.requests);
                    (x.calls as f64 / r, x.errors as f64 / r)
                })
        };
        let mut names: Vec<&str> = m
            .counts
            .iter()
            .chain(&n.counts)
            .map(|c| c.name.as_str())
            .collect();
        names.sort();
        names.dedup();
        names.sort_by(|a, b| {
            let sum = |s: &str| per(m, s).0 + per(n, s).0;
            sum(b).total_cmp(&sum(a)).then(a.cmp(b))
        });
        let cell = |(calls, errors): (f64, f64)| {
            if errors >= 0.005 {
                format!("{calls:.2} ({errors:.2} failed)")
            } else {
                format!("{calls:.2}")
            }
        };
        let total = |c: &Counted| {
            c.counts.iter().map(|x| x.calls).sum::<u64>() as f64 / f64::from(c.requests)
        };
        out.push_str(&format!(
            "Syscalls {}\n\n| syscall | Moria fileserver | nginx |\n|---|---:|---:|\n| **total** | **{:.2}** | **{:.2}** |\n",
            mode.title(),
            total(m),
            total(n)
        ));
        for name in names {
            let (a, b) = (per(m, name), per(n, name));
            // Below one call in a thousand requests: start-up and timer noise.
            if a.0 + b.0 >= 0.001 {
                out.push_str(&format!("| `{name}` | {} | {} |\n", cell(a), cell(b)));
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRACE: &str = "% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 40.00    0.004000           2      2000      1000 read
 35.00    0.003500           1      3000           writev
 25.00    0.002500           5       500           epoll_wait
------ ----------- ----------- --------- --------- ----------------
100.00    0.010000           1      5500      1000 total
";

    fn counted(kind: Server, counts: Vec<Count>) -> Counted {
        Counted {
            kind,
            mode: Mode::KeepAlive,
            requests: 1000,
            counts,
        }
    }

    #[test]
    fn parses_the_summary() {
        let c = parse(STRACE).unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(
            c[0],
            Count {
                name: "read".into(),
                calls: 2000,
                errors: 1000
            }
        );
        assert_eq!((c[1].calls, c[1].errors), (3000, 0));
        assert!(parse("strace: attach: ptrace(PTRACE_SEIZE, 1): Operation not permitted").is_err());
    }

    #[test]
    fn table_divides_by_requests() {
        let m = counted(Server::MoriaFiles, parse(STRACE).unwrap());
        let n = counted(
            Server::Nginx,
            vec![Count {
                name: "sendfile".into(),
                calls: 1000,
                errors: 0,
            }],
        );
        let t = table(&[m, n]);
        assert!(t.contains("| **total** | **5.50** | **1.00** |"), "{t}");
        assert!(t.contains("| `writev` | 3.00 | 0.00 |"), "{t}");
        assert!(t.contains("| `read` | 2.00 (1.00 failed) | 0.00 |"), "{t}");
        assert!(t.contains("| `sendfile` | 0.00 | 1.00 |"), "{t}");
        assert!(!t.contains("per connection"), "{t}");
    }
}
