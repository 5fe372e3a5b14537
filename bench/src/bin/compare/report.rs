//! Results: medians per server, the markdown table of Moria's ratio to each peer, the table
//! of memory per idle connection, and the raw JSON.

use serde::Serialize;

use crate::idle::{IdleResult, MemoryResult};
use crate::load::Measured;
use crate::scenario::Scenario;
use crate::server::Server;

/// One measured run of one server.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// What the load generator reported, if it finished.
    pub measured: Option<Measured>,
    /// Why there is no measurement.
    pub failure: Option<String>,
    /// Server CPU seconds (user + system, whole process tree) during the run.
    pub cpu_s: f64,
}

/// One server in one scenario.
#[derive(Clone, Debug, Serialize)]
pub struct ServerResult {
    /// Which server.
    pub kind: Server,
    /// Why its numbers are not reported (did not start, answered other than 200, …).
    pub refused: Option<String>,
    /// Every run, in order.
    pub runs: Vec<Run>,
    /// Peak resident memory of the process tree over the scenario, KiB.
    pub peak_rss_kib: u64,
}

/// One scenario's results: Moria first, then the peers.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioResult {
    /// The scenario.
    pub scenario: Scenario,
    /// Moria, then each peer.
    pub servers: Vec<ServerResult>,
}

/// Medians over a server's good runs.
pub struct Summary {
    rps: f64,
    p50: Option<f64>,
    p99: Option<f64>,
    errors: u64,
    cpu_per_100k: Option<f64>,
    load_cpu: Option<f64>,
    rss_mib: f64,
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    })
}

impl ServerResult {
    /// Medians, or why there are none.
    pub fn summary(&self) -> Result<Summary, String> {
        if let Some(why) = &self.refused {
            return Err(why.clone());
        }
        let good: Vec<(&Measured, f64)> = self
            .runs
            .iter()
            .filter_map(|r| r.measured.as_ref().map(|m| (m, r.cpu_s)))
            .collect();
        if let Some((m, _)) = good.iter().find(|(m, _)| m.non_2xx > 0) {
            return Err(format!("{} non-2xx answers", m.non_2xx));
        }
        let rps = median(good.iter().map(|(m, _)| m.rps).collect()).ok_or_else(|| {
            self.runs
                .iter()
                .find_map(|r| r.failure.clone())
                .unwrap_or_default()
        })?;
        Ok(Summary {
            rps,
            p50: median(good.iter().filter_map(|(m, _)| m.p50_ms).collect()),
            p99: median(good.iter().filter_map(|(m, _)| m.p99_ms).collect()),
            errors: good.iter().map(|(m, _)| m.errors).sum(),
            cpu_per_100k: median(
                good.iter()
                    .filter(|(m, _)| m.requests > 0)
                    .map(|(m, cpu)| cpu / m.requests as f64 * 1e5)
                    .collect(),
            ),
            load_cpu: median(good.iter().filter_map(|(m, _)| m.load_cpu).collect()),
            rss_mib: self.peak_rss_kib as f64 / 1024.0,
        })
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.2}"))
}

/// CPU seconds per 100k requests: two decimals, three below 0.1 (pipelined runs cost a few
/// hundredths, where two decimals would hide a 10% difference).
fn cpu(v: Option<f64>) -> String {
    match v {
        Some(v) if v < 0.1 => format!("{v:.3}"),
        Some(v) => format!("{v:.2}"),
        None => "–".into(),
    }
}

/// Load CPU from which a run counts as set by the load generator, not the server.
pub const GENERATOR_BOUND: f64 = 0.95;

/// Whether the load generator was at least [`GENERATOR_BOUND`] busy against both servers.
fn generator_bound(m: &Summary, p: &Summary) -> bool {
    let busy = |s: &Summary| s.load_cpu.is_some_and(|c| c >= GENERATOR_BOUND);
    busy(m) && busy(p)
}

fn percent(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{:.0}%", v * 100.0))
}

fn rate(s: &Summary, body: Option<u64>) -> String {
    match body {
        Some(b) if b >= 1 << 20 => format!("{:.2} ({:.0} MB/s)", s.rps, s.rps * b as f64 / 1e6),
        _ => format!("{:.0}", s.rps),
    }
}

/// The markdown table: one row per scenario and peer.
pub fn table(results: &[ScenarioResult]) -> String {
    let mut out = String::from(
        "| scenario | load | peer | Moria req/s | peer req/s | ratio | Moria p50 / p99 ms | \
         peer p50 / p99 ms | errors M / P | CPU s per 100k M / P | load CPU M / P | \
         peak RSS MiB M / P |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in results {
        let s = &r.scenario;
        let Some((moria, peers)) = r.servers.split_first() else {
            continue;
        };
        let m = moria.summary();
        for peer in peers {
            let p = peer.summary();
            let head = format!("| {} | {} | {} ", s.name, s.load.label(), peer.kind.name());
            match (&m, &p) {
                (Ok(m), Ok(p)) => out.push_str(&format!(
                    "{head}| {} | {} | **{:.2}**{} | {} / {} | {} / {} | {} / {} | {} / {} | \
                     {} / {} | {:.1} / {:.1} |\n",
                    rate(m, s.body_bytes),
                    rate(p, s.body_bytes),
                    m.rps / p.rps,
                    if generator_bound(m, p) { "†" } else { "" },
                    ms(m.p50),
                    ms(m.p99),
                    ms(p.p50),
                    ms(p.p99),
                    m.errors,
                    p.errors,
                    cpu(m.cpu_per_100k),
                    cpu(p.cpu_per_100k),
                    percent(m.load_cpu),
                    percent(p.load_cpu),
                    m.rss_mib,
                    p.rss_mib,
                )),
                (m, p) => {
                    let why = |who: &str, r: &Result<Summary, String>| match r {
                        Err(e) => format!("{who}: {e}. "),
                        Ok(_) => String::new(),
                    };
                    out.push_str(&format!(
                        "{head}| no result: {}{}| | | | | | | | |\n",
                        why("Moria", m),
                        why(peer.kind.name(), p)
                    ));
                }
            }
        }
    }
    out
}

/// Medians of one server's idle runs: bytes per connection, KiB before and after, bytes per
/// connection of the second half.
fn idle_medians(r: &IdleResult) -> Option<(f64, f64, f64, f64)> {
    let of = |f: fn(&crate::idle::IdleRun) -> f64| median(r.runs.iter().map(f).collect());
    Some((
        of(|x| x.bytes_per_conn)?,
        of(|x| x.kib_before as f64)?,
        of(|x| x.kib_after as f64)?,
        of(|x| x.marginal_bytes_per_conn)?,
    ))
}

/// The memory table: bytes of resident memory per idle keep-alive connection, Moria beside
/// each peer (ratio above 1: Moria holds more), over all connections and over the second half
/// (the marginal cost, without what a server spends once).
pub fn memory_table(results: &[MemoryResult]) -> String {
    let mut out = String::from(
        "| scenario | connections | peer | Moria B/conn | peer B/conn | ratio M/P | \
         second half M / P (ratio) | \
         Moria RSS MiB before → after | peer RSS MiB before → after | runs M / P |\n\
         |---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mib = |k: f64| k / 1024.0;
    for r in results {
        let Some((moria, peers)) = r.servers.split_first() else {
            continue;
        };
        for peer in peers {
            let head = format!(
                "| {} | {} | {} ",
                r.scenario.name,
                r.conns,
                peer.kind.name()
            );
            match (idle_medians(moria), idle_medians(peer)) {
                (Some(m), Some(p)) => out.push_str(&format!(
                    "{head}| {:.0} | {:.0} | **{:.2}** | {:.0} / {:.0} ({:.2}) | {:.1} → {:.1} | {:.1} → {:.1} | {} / {} |\n",
                    m.0,
                    p.0,
                    m.0 / p.0,
                    m.3,
                    p.3,
                    m.3 / p.3,
                    mib(m.1),
                    mib(m.2),
                    mib(p.1),
                    mib(p.2),
                    moria.runs.len(),
                    peer.runs.len(),
                )),
                _ => {
                    let why = |x: &IdleResult| {
                        x.failures
                            .first()
                            .map_or(String::new(), |e| format!("{}: {e}. ", x.kind.name()))
                    };
                    out.push_str(&format!(
                        "{head}| no result: {}{}| | | | | | |\n",
                        why(moria),
                        why(peer)
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idle::IdleRun;
    use crate::load::Load;

    fn server(kind: Server, rps: &[f64], non_2xx: u64) -> ServerResult {
        ServerResult {
            kind,
            refused: None,
            runs: rps
                .iter()
                .map(|&rps| Run {
                    measured: Some(Measured {
                        requests: (rps * 10.0) as u64,
                        rps,
                        non_2xx,
                        load_cpu: Some(rps / 1000.0),
                        ..Measured::default()
                    }),
                    failure: None,
                    cpu_s: 1.0,
                })
                .collect(),
            peak_rss_kib: 2048,
        }
    }

    fn scenario() -> Scenario {
        Scenario {
            name: "x".into(),
            what: "test",
            moria: Server::MoriaHello,
            peers: vec![Server::Minihttp],
            path: "/".into(),
            https: false,
            load: Load::Wrk { conns: 1, depth: 1 },
            body_bytes: None,
        }
    }

    #[test]
    fn ratio_of_medians() {
        let r = ScenarioResult {
            scenario: scenario(),
            servers: vec![
                server(Server::MoriaHello, &[100.0, 300.0, 200.0], 0),
                server(Server::Minihttp, &[100.0, 100.0, 900.0], 0),
            ],
        };
        let t = table(&[r]);
        assert!(t.contains("| 200 | 100 | **2.00** |"), "{t}");
        assert!(!t.contains('†'), "{t}");
        // 10 requests per unit of rps, 1 CPU second each run: 1e5 / 2000 and 1e5 / 1000.
        assert!(
            t.contains("| 50.00 / 100.00 | 20% / 10% | 2.0 / 2.0 |"),
            "{t}"
        );
    }

    #[test]
    fn marks_generator_bound_rows() {
        // `server` sets the load CPU to rps / 1000: medians 0.99 and 0.98, both past the bound.
        let r = ScenarioResult {
            scenario: scenario(),
            servers: vec![
                server(Server::MoriaHello, &[960.0, 990.0, 1000.0], 0),
                server(Server::Minihttp, &[950.0, 980.0, 999.0], 0),
            ],
        };
        let t = table(&[r]);
        assert!(t.contains("| **1.01**† |"), "{t}");
        assert!(t.contains("| 99% / 98% |"), "{t}");
        // One side below the bound: the server set the pace there, no mark.
        let r = ScenarioResult {
            scenario: scenario(),
            servers: vec![
                server(Server::MoriaHello, &[990.0], 0),
                server(Server::Minihttp, &[900.0], 0),
            ],
        };
        assert!(!table(&[r]).contains('†'));
    }

    #[test]
    fn refuses_non_2xx() {
        let r = ScenarioResult {
            scenario: scenario(),
            servers: vec![
                server(Server::MoriaHello, &[100.0], 0),
                server(Server::Minihttp, &[1e6], 5),
            ],
        };
        let t = table(&[r]);
        assert!(
            t.contains("no result: may_minihttp: 5 non-2xx answers"),
            "{t}"
        );
        assert!(!t.contains("**"), "{t}");
    }

    fn idle(kind: Server, per_conn: &[f64]) -> IdleResult {
        IdleResult {
            kind,
            runs: per_conn
                .iter()
                .map(|&b| IdleRun {
                    kib_before: 1024,
                    kib_half: 1536,
                    kib_after: 2048,
                    maps: (10, 10),
                    fds: (5, 105),
                    open_s: 1.0,
                    bytes_per_conn: b,
                    marginal_bytes_per_conn: b / 2.0,
                })
                .collect(),
            failures: Vec::new(),
        }
    }

    #[test]
    fn memory_ratio_of_medians() {
        let mut s = scenario();
        s.load = Load::Idle { conns: 100 };
        let r = MemoryResult {
            scenario: s,
            conns: 100,
            servers: vec![
                idle(Server::MoriaFiles, &[3000.0, 1000.0, 2000.0]),
                idle(Server::Nginx, &[500.0, 400.0, 600.0]),
            ],
        };
        let t = memory_table(std::slice::from_ref(&r));
        assert!(
            t.contains(
                "| x | 100 | nginx | 2000 | 500 | **4.00** | 1000 / 250 (4.00) | 1.0 → 2.0 |"
            ),
            "{t}"
        );
        let mut failed = r;
        failed.servers[1].runs.clear();
        failed.servers[1].failures.push("too few files".into());
        let t = memory_table(&[failed]);
        assert!(t.contains("no result: nginx: too few files."), "{t}");
    }
}
