//! [`Pool`]: a bounded, fiber-aware pool of [`Client`]s.
//!
//! - `acquire` parks the fiber until a connection is free, up to the acquire timeout; then it
//!   fails with [`Error::PoolTimeout`] (a distinct error: REST answers 503).
//! - Checkout drops connections that are broken, older than the max lifetime, or that the
//!   server closed while they sat idle (a non-waiting readability check on every checkout);
//!   after [`PoolOptions::check_after_idle`] it also runs an empty query. So after a server
//!   restart or `pg_terminate_backend`, stale connections are replaced by fresh ones.
//! - [`Pool::shared`] hands out the least busy of [`PoolOptions::pipelined`] [`SharedClient`]s:
//!   connections many fibers use at once for single statements, pipelined. They are
//!   opened on first use, outside `max_size`, and replaced when broken or closed by the server.
//! - Return: a connection left inside a transaction (committed nor rolled back, or failed) is
//!   rolled back, and discarded if that fails; a broken one is discarded. None is handed out
//!   dirty.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use moria_runtime::sync::Semaphore;

use super::client::Client;
use super::config::Config;
use super::connection::TxStatus;
use super::error::{Error, Result};
use super::shared::SharedClient;
use crate::metrics;

/// Connections per pool unless configured.
pub const DEFAULT_POOL_SIZE: usize = 16;
/// Most connections a pool may be configured with.
pub const MAX_POOL_SIZE: usize = 1024;
/// How long `acquire` waits for a free connection unless configured.
pub const DEFAULT_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);
/// Idle time after which a checkout runs a health query first, unless configured.
pub const DEFAULT_CHECK_AFTER_IDLE: Duration = Duration::from_secs(10);
/// Shared (pipelined) connections per pool unless configured.
pub const DEFAULT_PIPELINED: usize = 2;
/// [`PoolOptions::shared_fill`] unless configured: always the least busy shared connection.
pub const DEFAULT_SHARED_FILL: usize = 0;
/// Age after which a connection is replaced, unless configured.
pub const DEFAULT_MAX_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// Pool settings; every field has a `DEFAULT_` constant.
#[derive(Clone, Debug)]
pub struct PoolOptions {
    /// Most connections open at once. Default [`DEFAULT_POOL_SIZE`].
    pub max_size: usize,
    /// Wait for a free connection. Default [`DEFAULT_ACQUIRE_TIMEOUT`].
    pub acquire_timeout: Duration,
    /// Idle time after which checkout runs a health query. Default
    /// [`DEFAULT_CHECK_AFTER_IDLE`].
    pub check_after_idle: Duration,
    /// Age after which a connection is closed instead of reused. Default
    /// [`DEFAULT_MAX_LIFETIME`].
    pub max_lifetime: Duration,
    /// Shared connections for [`Pool::shared`], on top of `max_size` (0: none). Default
    /// [`DEFAULT_PIPELINED`].
    pub pipelined: usize,
    /// Requests pending on a shared connection before [`Pool::shared`] moves on to the next
    /// (0: always the least busy). Filling one connection first makes bigger pipelined batches
    /// under light load; with several workers it also sends every caller to the worker that
    /// owns that socket. Default [`DEFAULT_SHARED_FILL`].
    pub shared_fill: usize,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            max_size: DEFAULT_POOL_SIZE,
            acquire_timeout: DEFAULT_ACQUIRE_TIMEOUT,
            check_after_idle: DEFAULT_CHECK_AFTER_IDLE,
            max_lifetime: DEFAULT_MAX_LIFETIME,
            pipelined: DEFAULT_PIPELINED,
            shared_fill: DEFAULT_SHARED_FILL,
        }
    }
}

struct Idle {
    client: Client,
    since: Instant,
}

struct Inner {
    config: Config,
    opts: PoolOptions,
    idle: Mutex<Vec<Idle>>,
    permits: Semaphore,
    shared: Vec<moria_runtime::sync::Mutex<Option<SharedClient>>>,
}

/// A pool of connections to one server; cheap to clone.
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("config", &self.inner.config)
            .field("max_size", &self.inner.opts.max_size)
            .field("idle", &self.idle_count())
            .finish()
    }
}

impl Pool {
    /// A pool for `config`; connections are opened on demand.
    pub fn new(config: Config, opts: PoolOptions) -> Result<Pool> {
        if opts.max_size == 0 || opts.max_size > MAX_POOL_SIZE || opts.pipelined > MAX_POOL_SIZE {
            return Err(Error::Config(format!(
                "pool size must be 1..={MAX_POOL_SIZE} and pipelined 0..={MAX_POOL_SIZE}"
            )));
        }
        metrics::register();
        Ok(Pool {
            inner: Arc::new(Inner {
                permits: Semaphore::new(opts.max_size),
                shared: (0..opts.pipelined)
                    .map(|_| moria_runtime::sync::Mutex::new(None))
                    .collect(),
                config,
                opts,
                idle: Mutex::new(Vec::new()),
            }),
        })
    }

    /// A pool with default options for a URL or `key=value` string.
    pub fn connect(params: &str) -> Result<Pool> {
        Pool::new(Config::parse(params)?, PoolOptions::default())
    }

    /// The connection settings.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The pool settings.
    pub fn options(&self) -> &PoolOptions {
        &self.inner.opts
    }

    /// Connections idle in the pool right now.
    pub fn idle_count(&self) -> usize {
        self.inner
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Connections checked out right now.
    pub fn in_use(&self) -> usize {
        self.inner.opts.max_size - self.inner.permits.available()
    }

    /// A connection, waiting up to the pool's acquire timeout.
    pub fn acquire(&self) -> Result<PooledClient> {
        self.acquire_timeout(self.inner.opts.acquire_timeout)
    }

    /// A connection, waiting up to `timeout` for one to be free ([`Error::PoolTimeout`]).
    pub fn acquire_timeout(&self, timeout: Duration) -> Result<PooledClient> {
        if !self.inner.permits.try_acquire() {
            metrics::POOL_WAITS.inc();
            if !self.inner.permits.acquire_timeout(timeout) {
                metrics::POOL_TIMEOUTS.inc();
                return Err(Error::PoolTimeout(timeout));
            }
        }
        match self.checkout() {
            Ok(client) => Ok(PooledClient {
                client: Some(client),
                pool: self.inner.clone(),
            }),
            Err(e) => {
                self.inner.permits.release();
                Err(e)
            }
        }
    }

    /// One of the pool's shared connections, opened or replaced as needed: the first with
    /// fewer than [`PoolOptions::shared_fill`] requests pending, else the least busy (the first
    /// on a tie, so a lone fiber keeps to one socket and one worker). `None` when the pool has
    /// none ([`PoolOptions::pipelined`] is 0).
    pub fn shared(&self) -> Option<Result<SharedClient>> {
        let pending = |i: usize| {
            self.inner.shared[i]
                .lock()
                .as_ref()
                .map_or(0, SharedClient::pending)
        };
        let (n, fill) = (self.inner.shared.len(), self.inner.opts.shared_fill);
        // With no fill (the default) the first pass is skipped without taking any lock.
        let i = (0..n)
            .find(|&i| fill > 0 && pending(i) < fill)
            .or_else(|| (0..n).min_by_key(|&i| pending(i)))?;
        // A fiber-aware lock: after a restart one fiber reconnects while the others wait.
        let mut slot = self.inner.shared[i].lock();
        if let Some(s) = slot.as_ref().filter(|s| s.is_usable()) {
            return Some(Ok(s.clone()));
        }
        *slot = None;
        Some(SharedClient::connect_config(&self.inner.config).inspect(|s| *slot = Some(s.clone())))
    }

    fn pop_idle(&self) -> Option<Idle> {
        self.inner
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
    }

    /// With a permit held: a healthy idle connection, else a new one.
    fn checkout(&self) -> Result<Client> {
        let opts = &self.inner.opts;
        while let Some(Idle { mut client, since }) = self.pop_idle() {
            if client.created().elapsed() > opts.max_lifetime {
                let _ = client.close();
                continue;
            }
            if client.is_closed_by_peer() {
                log::info!("postgres: dropping a pooled connection the server closed");
                continue;
            }
            if since.elapsed() > opts.check_after_idle {
                if let Err(e) = client.batch_execute("") {
                    log::info!("postgres: dropping a pooled connection that failed its check: {e}");
                    continue;
                }
            }
            return Ok(client);
        }
        Client::connect_config(&self.inner.config)
    }
}

/// A connection checked out of a [`Pool`]; derefs to [`Client`] and goes back on drop.
pub struct PooledClient {
    client: Option<Client>,
    pool: Arc<Inner>,
}

impl std::fmt::Debug for PooledClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.client.fmt(f)
    }
}

impl PooledClient {
    /// Closes this connection instead of returning it to the pool.
    pub fn discard(mut self) {
        if let Some(c) = self.client.take() {
            let _ = c.close();
        }
        self.pool.permits.release();
    }
}

impl Deref for PooledClient {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.client
            .as_ref()
            .expect("pooled client present until drop")
    }
}

impl DerefMut for PooledClient {
    fn deref_mut(&mut self) -> &mut Client {
        self.client
            .as_mut()
            .expect("pooled client present until drop")
    }
}

impl Drop for PooledClient {
    fn drop(&mut self) {
        let Some(mut c) = self.client.take() else {
            return;
        };
        if !c.is_broken() && c.tx_status() != TxStatus::Idle {
            log::warn!(
                "postgres: a connection came back to the pool inside a transaction; rolling back"
            );
            c.conn.depth = 0;
            if c.batch_execute("ROLLBACK").is_err() || c.tx_status() != TxStatus::Idle {
                c.conn.depth = 0;
                drop(c);
                self.pool.permits.release();
                return;
            }
        }
        if !c.is_broken() {
            c.conn.query_timeout = self.pool.config.query_timeout;
            self.pool
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Idle {
                    client: c,
                    since: Instant::now(),
                });
        }
        self.pool.permits.release();
    }
}
