//! The HTTP collector: every live server's figures (labelled by its first address) and the
//! route duration histograms, written into a scrape. Servers add themselves when they start
//! and drop out when they end.

use std::sync::{Arc, Mutex, Weak};

use moria_runtime::metrics::{self, Collect, Exposition};

use crate::counters::{Counters, METHODS, STATUS_CLASSES, TLS_FAILURES};
use crate::server::ServerStats;
use std::sync::atomic::Ordering::Relaxed;

/// What the collector reads from a running server.
pub(crate) trait ServerView: Send + Sync {
    /// The server's label (its first bound address).
    fn label(&self) -> &str;
    /// The event counters.
    fn counters(&self) -> &Counters;
    /// The snapshot `Server::stats` returns.
    fn stats(&self) -> ServerStats;
    /// Connections open now.
    fn open(&self) -> u64;
}

/// Running servers.
static SERVERS: Mutex<Vec<Weak<dyn ServerView>>> = Mutex::new(Vec::new());

/// The collector of moria-http's families.
struct HttpCollector;

static HTTP: HttpCollector = HttpCollector;

/// Adds moria-http's collector to the runtime registry (idempotent).
pub(super) fn register() {
    metrics::register(&HTTP);
}

/// Lists a started server for scrapes while it lives.
pub(crate) fn register_server(s: Weak<dyn ServerView>) {
    register();
    let mut all = SERVERS.lock().unwrap_or_else(|e| e.into_inner());
    all.retain(|w| w.strong_count() > 0);
    all.push(s);
}

impl Collect for HttpCollector {
    fn collect(&self, out: &mut Exposition) {
        let servers: Vec<Arc<dyn ServerView>> = SERVERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        let stats: Vec<ServerStats> = servers.iter().map(|s| s.stats()).collect();
        type Pick = fn(&ServerStats, &dyn ServerView) -> u64;
        let gauges: [(&'static str, &str, Pick); 5] = [
            (
                "moria_http_connections_open",
                "Connections open now.",
                |_, s| s.open(),
            ),
            (
                "moria_http_connections_parked",
                "Idle keep-alive connections parked (no fiber).",
                |st, _| st.parked,
            ),
            (
                "moria_http_states_pooled",
                "Connection working states pooled for reuse.",
                |st, _| st.pooled_states,
            ),
            (
                "moria_http_states_busy",
                "Connection working states in use.",
                |st, _| st.busy_states,
            ),
            (
                "moria_http_connections_busy",
                "Connections being served now (open and not parked).",
                |st, s| s.open().saturating_sub(st.parked),
            ),
        ];
        for (name, help, pick) in gauges {
            let mut f = out.gauge(name, help);
            for (s, st) in servers.iter().zip(&stats) {
                f.value(&[("server", s.label())], pick(st, &**s));
            }
        }
        let counters: [(&'static str, &str, Pick); 8] = [
            (
                "moria_http_connections_accepted",
                "Connections accepted.",
                |st, _| st.accepted,
            ),
            (
                "moria_http_connections_refused",
                "Connections refused at the connection cap.",
                |st, _| st.refused,
            ),
            (
                "moria_http_connections_reclaimed",
                "Connections reclaimed after their fiber died.",
                |st, _| st.reclaimed,
            ),
            (
                "moria_http_handler_panics",
                "Handlers that panicked (answered 500).",
                |st, _| st.handler_panics,
            ),
            (
                "moria_http_body_panics",
                "Response bodies that panicked after the head was sent.",
                |st, _| st.body_panics,
            ),
            (
                "moria_http_received_bytes",
                "Bytes read from connections (plaintext under TLS).",
                |_, s| s.counters().bytes_in.load(Relaxed),
            ),
            (
                "moria_http_sent_bytes",
                "Bytes written to connections (plaintext under TLS).",
                |_, s| s.counters().bytes_out.load(Relaxed),
            ),
            (
                "moria_http_tls_handshakes",
                "TLS handshakes completed.",
                |_, s| s.counters().tls_handshakes.load(Relaxed),
            ),
        ];
        for (name, help, pick) in counters {
            let mut f = out.counter(name, help);
            for (s, st) in servers.iter().zip(&stats) {
                f.value(&[("server", s.label())], pick(st, &**s));
            }
        }
        let mut f = out.counter(
            "moria_http_tls_handshake_failures",
            "TLS handshakes that failed, by reason.",
        );
        for s in &servers {
            for (reason, n) in TLS_FAILURES.iter().zip(&s.counters().tls_failures) {
                f.value(
                    &[("server", s.label()), ("reason", reason)],
                    n.load(Relaxed),
                );
            }
        }
        let mut f = out.counter(
            "moria_http_requests",
            "Requests answered, by method and status class.",
        );
        for s in &servers {
            for (m, row) in METHODS.iter().zip(&s.counters().requests) {
                for (class, n) in STATUS_CLASSES.iter().zip(row) {
                    let n = n.load(Relaxed);
                    if n > 0 {
                        f.value(
                            &[
                                ("server", s.label()),
                                ("method", m.as_str()),
                                ("status", class),
                            ],
                            n,
                        );
                    }
                }
            }
        }
        super::routes::collect(out);
        super::client::collect(out);
    }
}
