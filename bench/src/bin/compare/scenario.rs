//! The scenarios: TFB's seven test types against the hyper peer (and may_minihttp where it
//! applies), TFB's plaintext without pipelining against both, hello against may_minihttp and hyper, the
//! static file against nginx over HTTP and HTTPS, over HTTP/2 (h2load, TLS and h2c) and over
//! HTTP/1.1 pipelined by h2load, a 1 GiB file, TLS handshakes (a new HTTPS connection per
//! request, full or resumed, P-256 and RSA-2048) against nginx, hello and the static file with
//! metrics on against the same servers with them off, the transit server against the axum peer
//! on the small and heavy route mixes, and the memory each idle keep-alive connection holds,
//! over HTTP and HTTPS.

use serde::Serialize;

use crate::load::Load;
use crate::server::Server;
use crate::setup::{Cert, BIG_FILE, BIG_SIZE, SMALL_FILE, SMALL_SIZE};

/// One comparison: Moria and its peers under the same load on the same path.
#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    /// Name for `--scenario` and the table.
    pub name: String,
    /// What it measures, in a few words.
    pub what: &'static str,
    /// Moria's server.
    pub moria: Server,
    /// The peers.
    pub peers: Vec<Server>,
    /// Request target.
    pub path: String,
    /// Over HTTPS.
    pub https: bool,
    /// The load.
    pub load: Load,
    /// Body bytes per response when throughput matters.
    pub body_bytes: Option<u64>,
}

impl Scenario {
    /// Whether the load speaks WebSocket (`ws://` URLs; no HTTP status probe).
    pub fn is_ws(&self) -> bool {
        matches!(self.load, Load::WsEcho { .. } | Load::WsBroadcast { .. })
    }

    /// Whether the load speaks h2c with prior knowledge (to the servers' h2c address).
    pub fn is_h2c(&self) -> bool {
        !self.https && matches!(self.load, Load::H2load { h1: false, .. })
    }
}

/// How many times fewer siege repetitions run over HTTPS than over HTTP.
const HTTPS_SIEGE_DIVISOR: u32 = 5;

/// Shortest run for a throughput scenario: a 1 GiB response takes about a second.
const MIN_THROUGHPUT_SECONDS: u64 = 5;

impl Scenario {
    /// The run length for a requested `secs`: at least [`MIN_THROUGHPUT_SECONDS`] when each
    /// response is large.
    pub fn seconds(&self, secs: u64) -> u64 {
        match self.body_bytes {
            Some(b) if b >= 1 << 20 => secs.max(MIN_THROUGHPUT_SECONDS),
            _ => secs,
        }
    }

    /// Moria's server, then the peers.
    pub fn servers(&self) -> Vec<Server> {
        std::iter::once(self.moria)
            .chain(self.peers.iter().copied())
            .collect()
    }
}

/// Connections for TFB's keep-alive tests: 64 per load CPU (TFB's own runs go to 512 on
/// far larger machines).
pub fn tfb_conns(load_cpus: usize) -> u32 {
    64 * load_cpus.max(1) as u32
}

/// Every scenario; `load_cpus` scales TFB's connection counts, `siege_reps` sizes siege runs
/// over HTTP (over HTTPS a fifth of it: every request is a full TLS handshake, and 500 × 20
/// handshakes on one server CPU outlast the 15-second bound), `idle_conns` is how many
/// connections the memory rows hold open (and the members of the WebSocket fan-out).
pub fn all(load_cpus: usize, siege_reps: u32, idle_conns: u32) -> Vec<Scenario> {
    let c = tfb_conns(load_cpus);
    let tfb = |name: &str, what, path: &str, peers: Vec<Server>, load| Scenario {
        name: format!("tfb-{name}"),
        what,
        moria: Server::MoriaTfb,
        peers,
        path: path.into(),
        https: false,
        load,
        body_bytes: None,
    };
    let keep = Load::Wrk { conns: c, depth: 1 };
    let both = || vec![Server::HyperTfb, Server::Minihttp];
    let hyper = || vec![Server::HyperTfb];
    let mut out = vec![
        tfb(
            "plaintext",
            "TFB plaintext, 16 requests per write",
            "/plaintext",
            both(),
            Load::Wrk {
                conns: c * 4,
                depth: 16,
            },
        ),
        Scenario {
            name: "plaintext-c100".into(),
            what: "TFB plaintext one request at a time: hello against hyper",
            moria: Server::MoriaTfb,
            peers: both(),
            path: "/plaintext".into(),
            https: false,
            load: Load::Wrk {
                conns: 100,
                depth: 1,
            },
            body_bytes: None,
        },
        tfb(
            "json",
            "TFB json: serde_json per request",
            "/json",
            both(),
            keep.clone(),
        ),
        tfb("db", "TFB single query", "/db", hyper(), keep.clone()),
        tfb(
            "queries",
            "TFB 20 queries per request",
            "/queries?queries=20",
            hyper(),
            keep.clone(),
        ),
        tfb(
            "cached-queries",
            "TFB 100 cached rows per request",
            "/cached-queries?count=100",
            hyper(),
            keep.clone(),
        ),
        tfb(
            "updates",
            "TFB 20 reads + 20 updates per request",
            "/updates?queries=20",
            hyper(),
            keep.clone(),
        ),
        tfb(
            "fortunes",
            "TFB fortunes: query, sort, escape, HTML",
            "/fortunes",
            hyper(),
            keep,
        ),
    ];
    for (name, load) in [
        (
            "hello-c100",
            Load::Wrk {
                conns: 100,
                depth: 1,
            },
        ),
        (
            "hello-c500",
            Load::Wrk {
                conns: 500,
                depth: 1,
            },
        ),
        (
            "hello-pipelined",
            Load::Wrk {
                conns: 100,
                depth: 16,
            },
        ),
    ] {
        out.push(Scenario {
            name: name.into(),
            what: "13-byte hello, same bytes on all three",
            moria: Server::MoriaHello,
            peers: vec![Server::Minihttp, Server::HyperHello],
            path: "/".into(),
            https: false,
            load,
            body_bytes: None,
        });
    }
    out.push(Scenario {
        name: "metrics-hello-c100".into(),
        what: "hello, metrics on vs off",
        moria: Server::MoriaHello,
        peers: vec![Server::MoriaHelloNoMetrics],
        path: "/".into(),
        https: false,
        load: Load::Wrk {
            conns: 100,
            depth: 1,
        },
        body_bytes: None,
    });
    out.push(Scenario {
        name: "metrics-files-c100".into(),
        what: "1312-byte static file, metrics on vs off",
        moria: Server::MoriaFiles,
        peers: vec![Server::MoriaFilesNoMetrics],
        path: format!("/{SMALL_FILE}"),
        https: false,
        load: Load::Wrk {
            conns: 100,
            depth: 1,
        },
        body_bytes: Some(SMALL_SIZE),
    });
    for https in [false, true] {
        let proto = if https { "https" } else { "http" };
        for (suffix, load) in [
            (
                "c100",
                Load::Wrk {
                    conns: 100,
                    depth: 1,
                },
            ),
            (
                "c500",
                Load::Wrk {
                    conns: 500,
                    depth: 1,
                },
            ),
            (
                "siege",
                Load::Siege {
                    conns: 500,
                    reps: if https {
                        (siege_reps / HTTPS_SIEGE_DIVISOR).max(1)
                    } else {
                        siege_reps
                    },
                },
            ),
        ] {
            out.push(Scenario {
                name: format!("static-{proto}-{suffix}"),
                what: "1312-byte static file",
                moria: Server::MoriaFiles,
                peers: vec![Server::Nginx],
                path: format!("/{SMALL_FILE}"),
                https,
                load,
                body_bytes: Some(SMALL_SIZE),
            });
        }
    }
    for (name, https, h1, conns, streams) in [
        ("h2-tls-c100-m10", true, false, 100, 10),
        ("h2-tls-c500-m1", true, false, 500, 1),
        ("h2c-c100-m10", false, false, 100, 10),
        ("h2c-c500-m1", false, false, 500, 1),
        ("h1-h2load-c100-m10", false, true, 100, 10),
    ] {
        out.push(Scenario {
            name: name.into(),
            what: if h1 {
                "1312-byte static file, HTTP/1.1 pipelined (against the h2c rows)"
            } else {
                "1312-byte static file over HTTP/2"
            },
            moria: Server::MoriaFiles,
            peers: vec![Server::Nginx],
            path: format!("/{SMALL_FILE}"),
            https,
            load: Load::H2load { conns, streams, h1 },
            body_bytes: Some(SMALL_SIZE),
        });
    }
    for (cert, cert_name) in [(Cert::P256, "p256"), (Cert::Rsa2048, "rsa2048")] {
        for (resume, kind) in [(false, "full"), (true, "resumed")] {
            out.push(Scenario {
                name: format!("tls-handshake-{kind}-{cert_name}"),
                what: "a new HTTPS connection per 1312-byte file: handshakes per second",
                moria: Server::MoriaFiles,
                peers: vec![Server::Nginx],
                path: format!("/{SMALL_FILE}"),
                https: true,
                load: Load::Handshakes {
                    conns: tfb_conns(load_cpus),
                    resume,
                    cert,
                },
                body_bytes: Some(SMALL_SIZE),
            });
        }
    }
    out.push(Scenario {
        name: "bigfile-http".into(),
        what: "1 GiB file, throughput",
        moria: Server::MoriaFiles,
        peers: vec![Server::Nginx],
        path: format!("/{BIG_FILE}"),
        https: false,
        load: Load::Wrk { conns: 2, depth: 1 },
        body_bytes: Some(BIG_SIZE),
    });
    for (mix, conns, what) in [
        ("small", 1, "transit schedules, small mix, one at a time"),
        ("small", 10, "transit schedules, small mix"),
        ("small", 50, "transit schedules, small mix"),
        ("heavy", 50, "transit schedules, JSON-heavy mix"),
    ] {
        out.push(Scenario {
            name: format!("transit-{mix}-c{conns}"),
            what,
            moria: Server::MoriaTransit,
            peers: vec![Server::TransitAxum],
            // The probe's target: an unknown route answers 200 `[]`; wrk's script draws the
            // measured routes from the mix.
            path: "/schedules/no-such-route".into(),
            https: false,
            load: Load::Routes { conns, mix },
            body_bytes: None,
        });
    }
    for conns in [1, 100, 1000] {
        out.push(Scenario {
            name: format!("ws-echo-c{conns}"),
            what: "WebSocket echo round trips, 32-byte text",
            moria: Server::MoriaWsEcho,
            peers: vec![Server::WsTokio],
            path: "/".into(),
            https: false,
            load: Load::WsEcho { conns },
            body_bytes: None,
        });
    }
    out.push(Scenario {
        name: "ws-broadcast".into(),
        what: "one room: each message to every member",
        moria: Server::MoriaChat,
        peers: vec![Server::WsTokio],
        path: "/ws/bench?name=bench".into(),
        https: false,
        load: Load::WsBroadcast {
            members: idle_conns,
        },
        body_bytes: None,
    });
    for https in [false, true] {
        out.push(Scenario {
            name: format!("idle-{}", if https { "https" } else { "http" }),
            what: "RSS per idle keep-alive connection, after one GET each",
            moria: Server::MoriaFiles,
            peers: vec![Server::Nginx],
            path: format!("/{SMALL_FILE}"),
            https,
            load: Load::Idle { conns: idle_conns },
            body_bytes: Some(SMALL_SIZE),
        });
    }
    out
}

/// The scenarios matched by any of `filters` (all when there is none): a filter that is a
/// scenario's whole name selects that one only (`idle-http`, not `idle-https`), any other
/// selects every name containing it.
pub fn select(all: Vec<Scenario>, filters: &[String]) -> Vec<Scenario> {
    let exact = |f: &String| all.iter().any(|s| &s.name == f);
    let matches = |s: &Scenario, f: &String| {
        if exact(f) {
            &s.name == f
        } else {
            s.name.contains(f.as_str())
        }
    };
    let keep: Vec<bool> = all
        .iter()
        .map(|s| filters.is_empty() || filters.iter().any(|f| matches(s, f)))
        .collect();
    all.into_iter()
        .zip(keep)
        .filter_map(|(s, k)| k.then_some(s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_filters_select() {
        let all = all(1, 10, 100);
        let mut names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
        assert_eq!(select(all.clone(), &["tfb".into()]).len(), 7);
        assert_eq!(select(all.clone(), &["plaintext".into()]).len(), 2);
        assert_eq!(select(all.clone(), &["static-https".into()]).len(), 3);
        assert_eq!(select(all.clone(), &["idle".into()]).len(), 2);
        let http = select(all.clone(), &["idle-http".into()]);
        assert_eq!(http.len(), 1);
        assert!(!http[0].https);
        assert_eq!(select(all.clone(), &["static-http".into()]).len(), 6);
        assert_eq!(select(all.clone(), &["transit".into()]).len(), 4);
        assert_eq!(select(all.clone(), &["transit-small".into()]).len(), 3);
        assert_eq!(select(all.clone(), &["ws-".into()]).len(), 4);
        assert_eq!(select(all.clone(), &["tls-handshake".into()]).len(), 4);
        assert_eq!(select(all.clone(), &["rsa2048".into()]).len(), 2);
        assert_eq!(select(all.clone(), &["h2".into()]).len(), 5);
        assert_eq!(select(all.clone(), &["h2c".into()]).len(), 2);
        assert!(select(all.clone(), &["h2c".into()])
            .iter()
            .all(Scenario::is_h2c));
        assert!(!select(all.clone(), &["h1-h2load".into()])[0].is_h2c());
        assert_eq!(select(all.clone(), &[]).len(), all.len());
        assert!(select(all, &["nothing".into()]).is_empty());
    }
}
