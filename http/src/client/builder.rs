//! [`ClientBuilder`]: every setting with its default as a named constant.

use std::sync::Arc;
use std::time::Duration;

use moria_crypto::TlsConnector;

use super::decode::{BombGuard, DEFAULT_BOMB_AFTER, DEFAULT_BOMB_RATIO};
use super::error::{Error, Result};
use super::pool::{Pool, PoolConfig};
use super::proxy::{Proxies, ProxyServer};
use super::{Client, Config, Inner};
use crate::limits::{Limits, DEFAULT_MAX_HEAD, DEFAULT_MAX_HEADERS, DEFAULT_MAX_REQUEST_LINE};

/// Time allowed to open a TCP connection (one address).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for a single read or write once connected.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest wait for a connection slot when a host is at its cap.
pub const DEFAULT_POOL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an idle pooled connection is kept (below common server keep-alive timeouts).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(50);
/// Most idle connections kept per host.
pub const DEFAULT_MAX_IDLE_PER_HOST: usize = 32;
/// Most connections open at once per host.
pub const DEFAULT_MAX_OPEN_PER_HOST: usize = 256;
/// Most redirects followed for one request.
pub const DEFAULT_MAX_REDIRECTS: usize = 10;
/// Largest body the buffered conveniences (`text`, `bytes`, `json`) accept.
pub const DEFAULT_MAX_BODY: u64 = 64 * 1024 * 1024;
/// Bodies of at least this many bytes (and all of unknown length) are sent with
/// `Expect: 100-continue` and held back until the server agrees.
pub const DEFAULT_EXPECT_CONTINUE_MIN: u64 = 1024 * 1024;
/// How long a held-back body waits for `100 Continue` before it is sent anyway (curl: 1 s).
pub const DEFAULT_CONTINUE_TIMEOUT: Duration = Duration::from_secs(1);
/// The User-Agent sent unless the request sets one.
pub const DEFAULT_USER_AGENT: &str = concat!("moria-http/", env!("CARGO_PKG_VERSION"));

/// Settings of a [`Client`]; `Client::builder()` starts from the defaults.
#[derive(Debug)]
pub struct ClientBuilder {
    config: Config,
    roots_pem: Vec<Vec<u8>>,
    accept_invalid_certs: bool,
    max_idle: usize,
    max_open: usize,
    idle_timeout: Duration,
    proxies: Proxies,
    proxy_error: Option<&'static str>,
}

impl ClientBuilder {
    pub(crate) fn new() -> ClientBuilder {
        ClientBuilder {
            config: Config {
                connect_timeout: DEFAULT_CONNECT_TIMEOUT,
                read_timeout: DEFAULT_READ_TIMEOUT,
                timeout: None,
                pool_timeout: DEFAULT_POOL_TIMEOUT,
                max_redirects: DEFAULT_MAX_REDIRECTS,
                decompress: true,
                max_body: DEFAULT_MAX_BODY,
                bomb: BombGuard {
                    ratio: DEFAULT_BOMB_RATIO,
                    after: DEFAULT_BOMB_AFTER,
                },
                user_agent: Some(DEFAULT_USER_AGENT.to_owned()),
                head_limits: Limits {
                    max_request_line: DEFAULT_MAX_REQUEST_LINE,
                    max_head: DEFAULT_MAX_HEAD,
                    max_headers: DEFAULT_MAX_HEADERS,
                    ..Limits::default()
                },
                expect_continue: Some(DEFAULT_EXPECT_CONTINUE_MIN),
                continue_timeout: DEFAULT_CONTINUE_TIMEOUT,
            },
            roots_pem: Vec::new(),
            accept_invalid_certs: false,
            max_idle: DEFAULT_MAX_IDLE_PER_HOST,
            max_open: DEFAULT_MAX_OPEN_PER_HOST,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            proxies: Proxies::default(),
            proxy_error: None,
        }
    }

    /// Time allowed to open a TCP connection. Default: [`DEFAULT_CONNECT_TIMEOUT`].
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.config.connect_timeout = timeout;
        self
    }

    /// Longest wait for one read or write. Default: [`DEFAULT_READ_TIMEOUT`].
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.config.read_timeout = timeout;
        self
    }

    /// Deadline for a whole request: connection, redirects, and reading the body. Default:
    /// none (each wait is still bounded by the read timeout).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.config.timeout = Some(timeout);
        self
    }

    /// Longest wait for a connection slot when a host is at its cap. Default:
    /// [`DEFAULT_POOL_TIMEOUT`].
    pub fn pool_timeout(mut self, timeout: Duration) -> Self {
        self.config.pool_timeout = timeout;
        self
    }

    /// Most idle connections kept per host (0 turns reuse off). Default:
    /// [`DEFAULT_MAX_IDLE_PER_HOST`].
    pub fn pool_max_idle_per_host(mut self, n: usize) -> Self {
        self.max_idle = n;
        self
    }

    /// Most connections open at once per host, idle ones included; more requests wait for a
    /// slot. Default: [`DEFAULT_MAX_OPEN_PER_HOST`].
    pub fn pool_max_open_per_host(mut self, n: usize) -> Self {
        self.max_open = n;
        self
    }

    /// How long an idle connection is kept. Default: [`DEFAULT_IDLE_TIMEOUT`].
    pub fn pool_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Most redirects followed (0: redirects are returned as they are). Default:
    /// [`DEFAULT_MAX_REDIRECTS`].
    pub fn max_redirects(mut self, n: usize) -> Self {
        self.config.max_redirects = n;
        self
    }

    /// Whether to send `Accept-Encoding: gzip, deflate` and decode such bodies. Default: true.
    pub fn decompress(mut self, on: bool) -> Self {
        self.config.decompress = on;
        self
    }

    /// Largest body `text`, `bytes` and `json` accept. Default: [`DEFAULT_MAX_BODY`].
    pub fn max_body_size(mut self, bytes: u64) -> Self {
        self.config.max_body = bytes;
        self
    }

    /// Refuses a decoded body that grows past `ratio` times its compressed size once more than
    /// `after` bytes are decoded. Default: [`DEFAULT_BOMB_RATIO`], [`DEFAULT_BOMB_AFTER`].
    pub fn decompression_guard(mut self, ratio: u64, after: u64) -> Self {
        self.config.bomb = BombGuard { ratio, after };
        self
    }

    /// The User-Agent sent (`None`: none). Default: [`DEFAULT_USER_AGENT`].
    pub fn user_agent(mut self, agent: Option<&str>) -> Self {
        self.config.user_agent = agent.map(str::to_owned);
        self
    }

    /// Sends bodies of at least `min_body` bytes (and all of unknown length) with
    /// `Expect: 100-continue`, holding them back until the server agrees; `None` never does.
    /// Default: [`DEFAULT_EXPECT_CONTINUE_MIN`].
    pub fn expect_continue(mut self, min_body: Option<u64>) -> Self {
        self.config.expect_continue = min_body;
        self
    }

    /// How long a held-back body waits for `100 Continue` before it is sent anyway. Default:
    /// [`DEFAULT_CONTINUE_TIMEOUT`].
    pub fn continue_timeout(mut self, timeout: Duration) -> Self {
        self.config.continue_timeout = timeout;
        self
    }

    /// Largest response head accepted. Default: [`DEFAULT_MAX_HEAD`].
    pub fn max_response_head(mut self, bytes: usize) -> Self {
        self.config.head_limits.max_head = bytes;
        self
    }

    /// Also trusts the certificates in `pem` as roots, besides the system's. Default: system
    /// roots only.
    pub fn add_root_certificate_pem(mut self, pem: &[u8]) -> Self {
        self.roots_pem.push(pem.to_vec());
        self
    }

    /// **Insecure**: with `true`, accepts any server certificate for any host (anyone on the
    /// path can read and change the traffic). Default: false.
    pub fn danger_accept_invalid_certs(mut self, accept: bool) -> Self {
        self.accept_invalid_certs = accept;
        self
    }

    /// Sends `http` URLs through the HTTP proxy `url` (`[http://][user:password@]host[:port]`,
    /// credentials percent-encoded, sent as Basic `Proxy-Authorization`). Default: none.
    pub fn http_proxy(mut self, url: &str) -> Self {
        match ProxyServer::parse(url) {
            Ok(p) => self.proxies.http = Some(p),
            Err(e) => self.proxy_error = Some(e),
        }
        self
    }

    /// Sends `https` URLs through a `CONNECT` tunnel of the HTTP proxy `url` (same syntax as
    /// [`ClientBuilder::http_proxy`]). Default: none.
    pub fn https_proxy(mut self, url: &str) -> Self {
        match ProxyServer::parse(url) {
            Ok(p) => self.proxies.https = Some(p),
            Err(e) => self.proxy_error = Some(e),
        }
        self
    }

    /// Hosts reached without a proxy: a comma-separated list of names and domains
    /// (`example.com` covers its subdomains), `*` for all. Default: none.
    pub fn no_proxy(mut self, list: &str) -> Self {
        self.proxies.set_no_proxy(list);
        self
    }

    /// Takes the proxies from `http_proxy`, `https_proxy` and `no_proxy` (lowercase first, then
    /// uppercase) where they are set. Default: the environment is not read.
    pub fn proxy_from_env(mut self) -> Self {
        if let Err(e) = self.proxies.read_env(|name| std::env::var(name).ok()) {
            self.proxy_error = Some(e);
        }
        self
    }

    /// Builds the client (loads the TLS roots once).
    pub fn build(self) -> Result<Client> {
        if let Some(reason) = self.proxy_error {
            return Err(Error::Config(reason));
        }
        if self.max_open == 0 {
            return Err(Error::Config("pool_max_open_per_host must be at least 1"));
        }
        for (d, what) in [
            (
                self.config.connect_timeout,
                "connect_timeout must be at least 1 ms",
            ),
            (
                self.config.read_timeout,
                "read_timeout must be at least 1 ms",
            ),
        ] {
            if d < Duration::from_millis(1) {
                return Err(Error::Config(what));
            }
        }
        let mut tls = TlsConnector::builder()
            .alpn(&["http/1.1"])
            .danger_accept_invalid_certs(self.accept_invalid_certs);
        for pem in &self.roots_pem {
            tls = tls.add_root_certificate_pem(pem);
        }
        let tls = tls.build().map_err(Error::TlsSetup)?;
        let pool = Pool::new(PoolConfig {
            max_idle: self.max_idle,
            max_open: self.max_open,
            idle_timeout: self.idle_timeout,
        });
        Ok(Client {
            inner: Arc::new(Inner {
                config: self.config,
                tls,
                pool,
                proxies: self.proxies,
            }),
        })
    }
}
