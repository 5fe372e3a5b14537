//! Connections kept per (scheme, host, port, proxy): idle keep-alive connections for reuse, a cap on
//! the connections open at once with fiber-parking waits for a free slot, and idle expiry.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use moria_runtime::sync::{Condvar, Mutex};

use super::conn::Connection;
use super::proxy::ProxyServer;
use super::url::Url;
use crate::metrics::{figures_for, register_host, ClientFigures, HostView};

/// The pool's settings (see the client builder for each default).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PoolConfig {
    /// Most idle connections kept per host.
    pub max_idle: usize,
    /// Most connections open at once per host, idle ones included.
    pub max_open: usize,
    /// How long an idle connection is kept.
    pub idle_timeout: Duration,
}

/// What identifies interchangeable connections.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    https: bool,
    host: String,
    port: u16,
    /// The proxy's `host:port`, for connections made through one.
    proxy: Option<String>,
}

/// All hosts' pools. Entries are never removed: one small entry per host ever contacted.
pub(crate) struct Pool {
    config: PoolConfig,
    hosts: Mutex<HashMap<Key, Arc<Host>>>,
}

/// One host's connections.
pub(crate) struct Host {
    config: PoolConfig,
    state: Mutex<HostState>,
    freed: Condvar,
    /// `host:port`, the metrics label.
    label: String,
    /// Requests, retries and errors, for the metrics (shared by every client's pool for
    /// this host).
    pub(crate) figures: Arc<ClientFigures>,
}

#[derive(Default)]
struct HostState {
    /// Connections open (idle, in use, or being opened).
    open: usize,
    /// Idle connections, most recently used last.
    idle: Vec<(Connection, Instant)>,
}

/// The right to one open connection to a host; given back when dropped.
pub(crate) struct Slot {
    host: Option<Arc<Host>>,
}

/// A checked-out connection and its slot.
pub(crate) struct Pooled {
    /// The connection.
    pub connection: Connection,
    /// Its slot in the host's pool.
    pub slot: Slot,
    /// Whether it carried a request before.
    pub reused: bool,
}

/// What a checkout gives: an idle connection, or a slot to open a new one in.
pub(crate) enum Checkout {
    Idle(Pooled),
    Fresh(Slot),
}

impl Pool {
    /// An empty pool.
    pub(crate) fn new(config: PoolConfig) -> Pool {
        Pool {
            config,
            hosts: Mutex::new(HashMap::new()),
        }
    }

    /// The pool of `url`'s origin, reached through `proxy` if any.
    pub(crate) fn host(&self, url: &Url, proxy: Option<&ProxyServer>) -> Arc<Host> {
        let key = Key {
            https: url.is_https(),
            host: url.host().to_owned(),
            port: url.port(),
            proxy: proxy.map(|p| p.url.authority()),
        };
        let mut hosts = self.hosts.lock();
        Arc::clone(hosts.entry(key).or_insert_with(|| {
            let label = format!("{}:{}", url.host(), url.port());
            let host = Arc::new(Host {
                config: self.config,
                state: Mutex::new(HostState::default()),
                freed: Condvar::new(),
                figures: figures_for(&label),
                label,
            });
            register_host(Arc::downgrade(&host) as _);
            host
        }))
    }
}

impl Host {
    /// An idle connection (unless `fresh`, which closes the idle ones instead), or a slot for a
    /// new one, waiting up to `wait` while the host is at its cap; `None` when the wait ran out.
    pub(crate) fn checkout(self: &Arc<Self>, fresh: bool, wait: Duration) -> Option<Checkout> {
        let give_up = Instant::now() + wait;
        let mut closing = Vec::new();
        let mut state = self.state.lock();
        let got = loop {
            let now = Instant::now();
            let keep = self.config.idle_timeout;
            let before = state.idle.len();
            let (stale, live): (Vec<_>, Vec<_>) = std::mem::take(&mut state.idle)
                .into_iter()
                .partition(|(c, since)| fresh || now - *since > keep || c.looks_closed());
            state.idle = live;
            state.open -= before - state.idle.len();
            closing.extend(stale);
            if let Some((connection, _)) = state.idle.pop() {
                break Some(Checkout::Idle(Pooled {
                    connection,
                    slot: self.slot(),
                    reused: true,
                }));
            }
            if state.open < self.config.max_open {
                state.open += 1;
                break Some(Checkout::Fresh(self.slot()));
            }
            let left = give_up.saturating_duration_since(now);
            if left.is_zero() {
                break None;
            }
            self.freed.wait_timeout(&mut state, left);
        };
        drop(state);
        drop(closing);
        got
    }

    fn slot(self: &Arc<Self>) -> Slot {
        Slot {
            host: Some(Arc::clone(self)),
        }
    }

    /// Connections open to this host right now (idle ones included).
    pub(crate) fn open(&self) -> usize {
        self.state.lock().open
    }
}

impl HostView for Host {
    fn label(&self) -> &str {
        &self.label
    }

    fn connections(&self) -> (usize, usize) {
        let state = self.state.lock();
        (state.idle.len(), state.open - state.idle.len())
    }
}

impl Pooled {
    /// Puts the connection back as idle (or closes it when the host keeps enough idle ones).
    pub(crate) fn release(self) {
        let Pooled {
            connection,
            mut slot,
            ..
        } = self;
        let Some(host) = slot.host.take() else {
            return;
        };
        let mut state = host.state.lock();
        let extra = if state.idle.len() < host.config.max_idle {
            state.idle.push((connection, Instant::now()));
            None
        } else {
            state.open -= 1;
            Some(connection)
        };
        drop(state);
        host.freed.notify_one();
        drop(extra);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(host) = self.host.take() {
            host.state.lock().open -= 1;
            host.freed.notify_one();
        }
    }
}
