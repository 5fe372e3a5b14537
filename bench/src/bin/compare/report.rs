//! Results: medians per server, the markdown table of Moria's ratio to each peer, and the
//! raw JSON.

use serde::Serialize;

use crate::load::Measured;
use crate::scenario::Scenario;
use crate::server::Kind;

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
    pub kind: Kind,
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
            rss_mib: self.peak_rss_kib as f64 / 1024.0,
        })
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.2}"))
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
         peer p50 / p99 ms | errors M / P | CPU s per 100k M / P | peak RSS MiB M / P |\n\
         |---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
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
                    "{head}| {} | {} | **{:.2}** | {} / {} | {} / {} | {} / {} | {} / {} | \
                     {:.1} / {:.1} |\n",
                    rate(m, s.body_bytes),
                    rate(p, s.body_bytes),
                    m.rps / p.rps,
                    ms(m.p50),
                    ms(m.p99),
                    ms(p.p50),
                    ms(p.p99),
                    m.errors,
                    p.errors,
                    ms(m.cpu_per_100k),
                    ms(p.cpu_per_100k),
                    m.rss_mib,
                    p.rss_mib,
                )),
                (m, p) => {
                    let why = |who: &str, r: &Result<Summary, String>| match r {
                        Err(e) => format!("{who}: {e}. "),
                        Ok(_) => String::new(),
                    };
                    out.push_str(&format!(
                        "{head}| no result: {}{}| | | | | | | |\n",
                        why("Moria", m),
                        why(peer.kind.name(), p)
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
    use crate::load::Load;

    fn server(kind: Kind, rps: &[f64], non_2xx: u64) -> ServerResult {
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
            moria: Kind::MoriaHello,
            peers: vec![Kind::Minihttp],
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
                server(Kind::MoriaHello, &[100.0, 300.0, 200.0], 0),
                server(Kind::Minihttp, &[100.0, 100.0, 900.0], 0),
            ],
        };
        let t = table(&[r]);
        assert!(t.contains("| 200 | 100 | **2.00** |"), "{t}");
        assert!(t.contains("| 2.0 / 2.0 |"), "{t}");
    }

    #[test]
    fn refuses_non_2xx() {
        let r = ScenarioResult {
            scenario: scenario(),
            servers: vec![
                server(Kind::MoriaHello, &[100.0], 0),
                server(Kind::Minihttp, &[1e6], 5),
            ],
        };
        let t = table(&[r]);
        assert!(
            t.contains("no result: may_minihttp: 5 non-2xx answers"),
            "{t}"
        );
        assert!(!t.contains("**"), "{t}");
    }
}
