//! The HTTP client's metrics: per origin host (`host:port`), requests by status class, retries
//! on a fresh connection, connect and TLS errors, and the pool's idle and busy connections.
//! Every client's pool for one host records into that host's [`ClientFigures`] (kept for the
//! life of the process, one per host ever contacted, so counters never go back when a client
//! is dropped); a scrape sums the live pools' connections by host.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use moria_runtime::metrics::{Counter, Exposition};

use crate::counters::STATUS_CLASSES;

/// One host's counters.
#[derive(Debug, Default)]
pub(crate) struct ClientFigures {
    /// Responses by status class.
    pub responses: [Counter; STATUS_CLASSES.len()],
    /// Requests sent again on a fresh connection after a reused one was found dead.
    pub retries: Counter,
    /// Connections that could not be opened (DNS, TCP connect, proxy).
    pub connect_errors: Counter,
    /// TLS handshakes that failed (verification included).
    pub tls_errors: Counter,
}

impl ClientFigures {
    /// Counts a response with `status`.
    pub(crate) fn response(&self, status: u16) {
        self.responses[usize::from(status / 100).clamp(1, 5) - 1].inc();
    }
}

/// What the collector reads from one live pooled host.
pub(crate) trait HostView: Send + Sync {
    /// `host:port`.
    fn label(&self) -> &str;
    /// (idle, busy) connections now.
    fn connections(&self) -> (usize, usize);
}

/// Every live pooled host of every client.
static HOSTS: Mutex<Vec<Weak<dyn HostView>>> = Mutex::new(Vec::new());
/// Every host's counters, by label.
static FIGURES: Mutex<BTreeMap<String, Arc<ClientFigures>>> = Mutex::new(BTreeMap::new());

/// The counters of host `label` (`host:port`), shared by every client's pool for it.
pub(crate) fn figures_for(label: &str) -> Arc<ClientFigures> {
    let mut all = FIGURES.lock().unwrap_or_else(|e| e.into_inner());
    Arc::clone(all.entry(label.to_string()).or_default())
}

/// Lists a host's pool for scrapes while it lives.
pub(crate) fn register_host(h: Weak<dyn HostView>) {
    super::collect::register();
    let mut all = HOSTS.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|w| w.strong_count() > 0);
    all.push(h);
}

/// One host's counters and live connections.
#[derive(Default)]
struct Sums {
    figures: Arc<ClientFigures>,
    idle: usize,
    busy: usize,
}

type Pick = fn(&Sums) -> u64;

const COUNTERS: [(&str, &str, Pick); 3] = [
    (
        "moria_http_client_retries",
        "Requests retried on a fresh connection.",
        |s| s.figures.retries.get(),
    ),
    (
        "moria_http_client_connect_errors",
        "Connections that could not be opened.",
        |s| s.figures.connect_errors.get(),
    ),
    (
        "moria_http_client_tls_errors",
        "TLS handshakes that failed.",
        |s| s.figures.tls_errors.get(),
    ),
];

const GAUGES: [(&str, &str, Pick); 2] = [
    (
        "moria_http_client_connections_idle",
        "Pooled idle client connections.",
        |s| s.idle as u64,
    ),
    (
        "moria_http_client_connections_busy",
        "Client connections in use.",
        |s| s.busy as u64,
    ),
];

/// Writes the client families.
pub(super) fn collect(out: &mut Exposition) {
    let mut by_host: BTreeMap<String, Sums> = FIGURES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|(label, f)| {
            let figures = Arc::clone(f);
            (
                label.clone(),
                Sums {
                    figures,
                    ..Sums::default()
                },
            )
        })
        .collect();
    let hosts: Vec<_> = HOSTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    for h in hosts {
        let s = by_host.entry(h.label().to_string()).or_default();
        let (idle, busy) = h.connections();
        s.idle += idle;
        s.busy += busy;
    }
    let mut f = out.counter(
        "moria_http_client_requests",
        "Client responses received, by host and status class.",
    );
    for (host, s) in &by_host {
        for (class, n) in STATUS_CLASSES.iter().zip(&s.figures.responses) {
            f.value(&[("host", host), ("status", class)], n.get());
        }
    }
    for (name, help, pick) in COUNTERS {
        let mut f = out.counter(name, help);
        for (host, s) in &by_host {
            f.value(&[("host", host)], pick(s));
        }
    }
    for (name, help, pick) in GAUGES {
        let mut f = out.gauge(name, help);
        for (host, s) in &by_host {
            f.value(&[("host", host)], pick(s));
        }
    }
}
