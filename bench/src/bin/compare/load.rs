//! The load generators: wrk (keep-alive, optionally pipelined, or drawing transit routes from a
//! mix), h2load (HTTP/2 streams, or HTTP/1.1 pipelined) and siege (connection close), each pinned to the load CPUs, bounded by `timeout`, and
//! their output parsed.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::setup::Cert;

/// What one load run measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Measured {
    /// Responses completed.
    pub requests: u64,
    /// Responses per second.
    pub rps: f64,
    /// Median latency in ms (wrk only).
    pub p50_ms: Option<f64>,
    /// 99th percentile latency in ms (wrk only).
    pub p99_ms: Option<f64>,
    /// Socket errors (wrk) or failed transactions (siege).
    pub errors: u64,
    /// Responses other than 2xx/3xx (wrk).
    pub non_2xx: u64,
    /// The load generator's CPU time over the run's wall time and its CPUs (1.0: every load
    /// CPU busy throughout). Near 1.0 the generator, not the server, sets the pace.
    pub load_cpu: Option<f64>,
}

/// How a scenario loads the server.
#[derive(Clone, Debug, Serialize)]
pub enum Load {
    /// wrk with `conns` keep-alive connections, `depth` requests per write when pipelined.
    Wrk {
        /// Connections.
        conns: u32,
        /// Requests per write (1: no pipelining).
        depth: u32,
    },
    /// wrk with `conns` keep-alive connections, each request `GET /schedules/ROUTE` with ROUTE
    /// drawn from the feed's `routes_MIX.txt` (bench/scripts/transit_mix.lua).
    Routes {
        /// Connections.
        conns: u32,
        /// The mix: `small` or `heavy`.
        mix: &'static str,
    },
    /// `h2load -c conns -m streams`: HTTP/2 with `streams` requests in flight on each
    /// connection (h2c with prior knowledge on `http://`, ALPN `h2` on `https://`), or with
    /// `h1` HTTP/1.1 pipelined `streams` deep.
    H2load {
        /// Connections.
        conns: u32,
        /// Requests in flight per connection.
        streams: u32,
        /// HTTP/1.1 (`--h1`) instead of HTTP/2.
        h1: bool,
    },
    /// `siege -b -c conns -r reps`, one connection per request (siege's `connection = close`).
    Siege {
        /// Simulated users.
        conns: u32,
        /// Repetitions per user.
        reps: u32,
    },
    /// `ws_load echo`: `conns` WebSocket connections, each sending a 32-byte text message and
    /// waiting for its echo, over and over (a request is a round trip).
    WsEcho {
        /// Connections.
        conns: u32,
    },
    /// `ws_load broadcast`: `members` WebSocket connections in one room and a publisher
    /// keeping 4 messages in flight (a request is one message delivered to one member).
    WsBroadcast {
        /// Members reading.
        members: u32,
    },
    /// `tls_load`: `conns` connections at once, each request on a new TLS connection
    /// (`Connection: close`): full handshakes, or (`resume`) resumed with the ticket of the
    /// connection before; the server presents `cert`.
    Handshakes {
        /// Connections at once.
        conns: u32,
        /// Offer the last session ticket.
        resume: bool,
        /// The server's certificate.
        cert: Cert,
    },
    /// No load generator: `conns` keep-alive connections, one GET each, then left idle while
    /// the server's memory is read (see `idle`).
    Idle {
        /// Connections held open.
        conns: u32,
    },
}

impl Load {
    /// A short label for the table: `wrk c100`, `wrk c256 ×16`, `siege c500 r20`.
    pub fn label(&self) -> String {
        match self {
            Load::Wrk { conns, depth: 1 } => format!("wrk c{conns}"),
            Load::Wrk { conns, depth } => format!("wrk c{conns} ×{depth}"),
            Load::Routes { conns, mix } => format!("wrk c{conns} {mix} mix"),
            Load::H2load { conns, streams, h1 } => {
                let proto = if *h1 { " --h1" } else { "" };
                format!("h2load{proto} c{conns} m{streams}")
            }
            Load::Siege { conns, reps } => format!("siege -b c{conns} r{reps}"),
            Load::WsEcho { conns } => format!("ws echo c{conns}"),
            Load::WsBroadcast { members } => format!("ws fan-out to {members}"),
            Load::Idle { conns } => format!("{conns} idle conns"),
            Load::Handshakes { conns, resume, .. } => {
                format!("tls c{conns} {}", if *resume { "resumed" } else { "full" })
            }
        }
    }
}

/// Where the load generator runs and what it needs.
pub struct Generator<'a> {
    /// CPUs for `taskset -c` (empty: not pinned).
    pub cpus: &'a str,
    /// wrk threads.
    pub threads: usize,
    /// The pipelining script (bench/scripts/pipeline.lua).
    pub pipeline_lua: &'a Path,
    /// The siege configuration file.
    pub siegerc: &'a Path,
    /// The transit mixes' script (bench/scripts/transit_mix.lua).
    pub transit_lua: &'a Path,
    /// The generated GTFS feed, holding `routes_small.txt` and `routes_heavy.txt`.
    pub gtfs: &'a Path,
    /// The WebSocket load generator (bench/src/bin/ws_load.rs).
    pub ws_load: &'a Path,
    /// The TLS handshake load generator (bench/src/bin/tls_load.rs).
    pub tls_load: &'a Path,
}

/// A load generator's output parser.
type Parser = fn(&str) -> Result<Measured, String>;

/// Longest any single run may take beyond its nominal duration before it is killed.
const GRACE: Duration = Duration::from_secs(10);

impl Generator<'_> {
    fn command(&self, limit: Duration, program: &str) -> Command {
        let mut c = Command::new("timeout");
        c.arg("-k")
            .arg("2")
            .arg(format!("{}", limit.as_secs().max(1)));
        if !self.cpus.is_empty() {
            c.arg("taskset").arg("-c").arg(self.cpus);
        }
        c.arg(program);
        c
    }

    /// wrk with `conns` connections for `secs` seconds, then `script`'s arguments (none: no
    /// script).
    fn wrk(&self, conns: u32, secs: u64, url: &str, script: Option<(&Path, String)>) -> Command {
        let mut c = self.command(Duration::from_secs(secs) + GRACE, "wrk");
        let threads = self.threads.min(conns as usize).max(1);
        c.arg(format!("-t{threads}"))
            .arg(format!("-c{conns}"))
            .arg(format!("-d{secs}s"))
            .arg("--timeout")
            .arg("5s")
            .arg("--latency");
        if let Some((lua, _)) = &script {
            c.arg("-s").arg(lua);
        }
        c.arg(url);
        if let Some((_, arg)) = script {
            c.arg("--").arg(arg);
        }
        c
    }

    /// ws_load in `mode` against `url` for `secs` seconds, on as many workers as wrk has
    /// threads (connecting 10,000 members takes a few seconds more than the run).
    fn ws_load(&self, secs: u64, mode: &str, url: &str) -> Command {
        let mut c = self.command(
            Duration::from_secs(secs) + GRACE + GRACE,
            &self.ws_load.display().to_string(),
        );
        c.arg(mode)
            .arg("--workers")
            .arg(self.threads.max(1).to_string())
            .arg("--url")
            .arg(url)
            .arg("--seconds")
            .arg(secs.to_string());
        c
    }

    /// Runs `load` against `url` for `secs` seconds (wrk) and parses the result; `Err` says
    /// why there is none (killed, unparsable output).
    pub fn run(&self, load: &Load, url: &str, secs: u64) -> Result<Measured, String> {
        let (mut cmd, parse): (Command, Parser) = match load {
            Load::Wrk { conns, depth } => {
                let script = (*depth > 1).then(|| (self.pipeline_lua, depth.to_string()));
                (self.wrk(*conns, secs, url, script), parse_wrk)
            }
            Load::Routes { conns, mix } => {
                let routes = self.gtfs.join(format!("routes_{mix}.txt"));
                let script = Some((self.transit_lua, routes.display().to_string()));
                (self.wrk(*conns, secs, url, script), parse_wrk)
            }
            Load::H2load { conns, streams, h1 } => {
                let mut c = self.command(Duration::from_secs(secs) + GRACE, "h2load");
                let threads = self.threads.min(*conns as usize).max(1);
                c.arg(format!("-t{threads}"))
                    .arg(format!("-c{conns}"))
                    .arg(format!("-m{streams}"))
                    .arg(format!("-D{secs}"));
                if *h1 {
                    c.arg("--h1");
                }
                c.arg(url);
                (c, parse_h2load)
            }
            Load::Siege { conns, reps } => {
                let mut c = self.command(Duration::from_secs(15), "siege");
                c.arg("-R")
                    .arg(self.siegerc)
                    .arg("-b")
                    .arg(format!("-c{conns}"))
                    .arg(format!("-r{reps}"))
                    .arg(url);
                (c, parse_siege)
            }
            Load::WsEcho { conns } => {
                let mut c = self.ws_load(secs, "echo", url);
                c.arg("--conns").arg(conns.to_string());
                (c, parse_ws_load)
            }
            Load::WsBroadcast { members } => {
                let mut c = self.ws_load(secs, "broadcast", url);
                c.arg("--subscribers").arg(members.to_string());
                (c, parse_ws_load)
            }
            Load::Handshakes { conns, resume, .. } => {
                let program = self.tls_load.display().to_string();
                let mut c = self.command(Duration::from_secs(secs) + GRACE, &program);
                c.arg("--url")
                    .arg(url)
                    .arg("--conns")
                    .arg(conns.to_string())
                    .arg("--seconds")
                    .arg(secs.to_string());
                if *resume {
                    c.arg("--resume");
                }
                (c, parse_ws_load)
            }
            Load::Idle { .. } => return Err("idle connections are not a wrk or siege run".into()),
        };
        let (cpu_before, started) = (children_cpu_seconds(), Instant::now());
        let out = cmd.output().map_err(|e| format!("cannot run: {e}"))?;
        let busy = (children_cpu_seconds() - cpu_before)
            / (started.elapsed().as_secs_f64() * self.threads.max(1) as f64);
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            // timeout(1) exits 124 when it stopped the run, or dies by SIGKILL with it.
            let killed = out.status.code().is_none_or(|c| c == 124);
            return Err(if killed {
                "killed at the run's time bound".into()
            } else {
                format!(
                    "load generator failed ({}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                )
            });
        }
        let mut m = parse(&text)?;
        m.load_cpu = Some(busy);
        Ok(m)
    }
}

/// ws_load's and tls_load's last line: `{"messages", "per_sec", "p50_ms", "p99_ms", "errors"}`.
fn parse_ws_load(text: &str) -> Result<Measured, String> {
    #[derive(serde::Deserialize)]
    struct Report {
        messages: u64,
        per_sec: f64,
        p50_ms: Option<f64>,
        p99_ms: Option<f64>,
        errors: u64,
    }
    let last = text.lines().last().unwrap_or("");
    let r: Report =
        serde_json::from_str(last).map_err(|e| format!("ws_load printed {last:?}: {e}"))?;
    Ok(Measured {
        requests: r.messages,
        rps: r.per_sec,
        p50_ms: r.p50_ms,
        p99_ms: r.p99_ms,
        errors: r.errors,
        ..Measured::default()
    })
}

/// CPU seconds (user + system) of this process's children that have been waited for: across a
/// load run, what `timeout`, `taskset` and wrk or siege used (the servers are children too,
/// but none is waited for until its scenario ends).
fn children_cpu_seconds() -> f64 {
    // SAFETY: rusage is plain data; getrusage fills it and reads nothing from it.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut u);
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// wrk's duration text (`812.00us`, `1.20ms`, `2.01s`, `1.00m`) in milliseconds.
fn millis(s: &str) -> Option<f64> {
    let split = s.find(|c: char| c.is_ascii_alphabetic())?;
    let (n, unit) = s.split_at(split);
    let n: f64 = n.parse().ok()?;
    Some(match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        _ => return None,
    })
}

/// Parses `wrk --latency` output.
pub fn parse_wrk(text: &str) -> Result<Measured, String> {
    let mut m = Measured::default();
    let mut rps = None;
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["50%", v] => m.p50_ms = millis(v),
            ["99%", v] => m.p99_ms = millis(v),
            [n, "requests", "in", ..] => m.requests = n.parse().unwrap_or(0),
            ["Requests/sec:", v] => rps = v.parse().ok(),
            ["Non-2xx", "or", "3xx", "responses:", n] => m.non_2xx = n.parse().unwrap_or(0),
            ["Socket", "errors:", rest @ ..] => {
                m.errors = rest
                    .iter()
                    .filter_map(|w| w.trim_end_matches(',').parse::<u64>().ok())
                    .sum();
            }
            _ => {}
        }
    }
    m.rps = rps.ok_or_else(|| format!("no Requests/sec in wrk output: {text}"))?;
    if m.requests == 0 {
        return Err("no response completed".into());
    }
    Ok(m)
}

/// Parses h2load's summary (`finished in 5.00s, 40310.52 req/s, …`, then the request and
/// status code counts; it reports no latency percentiles).
pub fn parse_h2load(text: &str) -> Result<Measured, String> {
    let mut m = Measured::default();
    let mut rps = None;
    let count = |words: &[&str], what: &str| -> u64 {
        words
            .windows(2)
            .find(|w| w[1].trim_end_matches(',') == what)
            .and_then(|w| w[0].parse().ok())
            .unwrap_or(0)
    };
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["finished", "in", _, v, "req/s,", ..] => rps = v.parse().ok(),
            ["requests:", rest @ ..] => {
                m.requests = count(rest, "succeeded");
                m.errors = count(rest, "failed") + count(rest, "errored") + count(rest, "timeout");
            }
            ["status", "codes:", rest @ ..] => m.non_2xx = count(rest, "4xx") + count(rest, "5xx"),
            _ => {}
        }
    }
    m.rps = rps.ok_or_else(|| format!("no req/s in h2load output: {text}"))?;
    if m.requests == 0 {
        return Err("no response completed".into());
    }
    Ok(m)
}

/// Parses siege's JSON summary (`json_output = true`).
pub fn parse_siege(text: &str) -> Result<Measured, String> {
    let start = text.find('{').ok_or("no JSON in siege output")?;
    let end = text.rfind('}').ok_or("no JSON in siege output")?;
    let v: serde_json::Value =
        serde_json::from_str(&text[start..=end]).map_err(|e| format!("siege JSON: {e}"))?;
    let num = |k: &str| v[k].as_f64().ok_or_else(|| format!("siege JSON lacks {k}"));
    Ok(Measured {
        requests: num("transactions")? as u64,
        rps: num("transaction_rate")?,
        p50_ms: None,
        p99_ms: None,
        errors: num("failed_transactions")? as u64,
        non_2xx: 0,
        load_cpu: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const WRK: &str = "Running 5s test @ http://127.0.0.1:1/plaintext
  1 threads and 100 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.10ms  300.00us   9.00ms   90.00%
    Req/Sec    90.00k     3.00k   95.00k    70.00%
  Latency Distribution
     50%  812.00us
     75%    1.20ms
     90%    1.50ms
     99%    2.50s
  450000 requests in 5.00s, 60.00MB read
  Socket errors: connect 1, read 2, write 0, timeout 3
  Non-2xx or 3xx responses: 7
Requests/sec:  90000.50
Transfer/sec:     12.00MB
";

    #[test]
    fn parses_wrk() {
        let m = parse_wrk(WRK).unwrap();
        assert_eq!(
            m,
            Measured {
                requests: 450_000,
                rps: 90000.5,
                p50_ms: Some(0.812),
                p99_ms: Some(2500.0),
                errors: 6,
                non_2xx: 7,
                load_cpu: None,
            }
        );
        assert!(parse_wrk("garbage").is_err());
        let none = WRK.replace("450000 requests", "0 requests");
        assert_eq!(parse_wrk(&none), Err("no response completed".into()));
    }

    #[test]
    fn parses_h2load() {
        let out = "finished in 5.00s, 40310.52 req/s, 56.94MB/s
requests: 201600 total, 201700 started, 201553 done, 201550 succeeded, 3 failed, 1 errored, 2 timeout
status codes: 201540 2xx, 0 3xx, 4 4xx, 6 5xx
traffic: 46.09MB (48331090) total, 4.62MB (4839600) headers (space savings 26.73%), 40.91MB (42902400) data
";
        let m = parse_h2load(out).unwrap();
        assert_eq!(
            (m.requests, m.rps, m.errors, m.non_2xx),
            (201_550, 40310.52, 6, 10)
        );
        assert!(parse_h2load("garbage").is_err());
        let none = out.replace("201550 succeeded", "0 succeeded");
        assert_eq!(parse_h2load(&none), Err("no response completed".into()));
    }

    #[test]
    fn parses_siege_json() {
        let out = "** SIEGE 4.0.7\n{\n\t\"transactions\":\t\t\t       10000,\n\t\"availability\":\t\t\t      100.00,\n\t\"elapsed_time\":\t\t\t        1.25,\n\t\"response_time\":\t\t        0.06,\n\t\"transaction_rate\":\t\t     8000.00,\n\t\"failed_transactions\":\t\t           2\n}\n";
        let m = parse_siege(out).unwrap();
        assert_eq!((m.requests, m.rps, m.errors), (10000, 8000.0, 2));
        assert!(parse_siege("{").is_err());
    }

    #[test]
    fn labels() {
        assert_eq!(
            Load::Wrk {
                conns: 100,
                depth: 1
            }
            .label(),
            "wrk c100"
        );
        assert_eq!(
            Load::Wrk {
                conns: 256,
                depth: 16
            }
            .label(),
            "wrk c256 ×16"
        );
        assert_eq!(Load::Idle { conns: 2000 }.label(), "2000 idle conns");
        let h2 = |h1| Load::H2load {
            conns: 100,
            streams: 10,
            h1,
        };
        assert_eq!(h2(false).label(), "h2load c100 m10");
        assert_eq!(h2(true).label(), "h2load --h1 c100 m10");
        assert_eq!(
            Load::Routes {
                conns: 50,
                mix: "heavy"
            }
            .label(),
            "wrk c50 heavy mix"
        );
    }
}
