//! [`ServerBuilder`]: listeners, limits and options, validated before anything is bound.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use moria_crypto::TlsAcceptor;
use moria_runtime::fiber::Builder as FiberBuilder;
use moria_runtime::net::{ListenOptions, ParkingLot, TcpListener};
use moria_runtime::sync::{Event, Reset, Semaphore};
use moria_runtime::ShutdownToken;

use super::accept::{self, accept_loop};
use super::refuse::MAX_REFUSING;
use super::{supervise, Server, Shared, DEFAULT_SERVER_HEADER};
use crate::compress::Compression;
use crate::counters::Counters;
use crate::dispatch::h1::ConnConfig;
use crate::error::{Error, Result};
use crate::h1::ConnPool;
use crate::handler::Handler;
use crate::limits::{self, Limits};
use crate::tracker::Tracker;

/// Configures and starts a [`Server`]; every setter documents its default.
pub struct ServerBuilder {
    addrs: Vec<(String, Option<Arc<TlsAcceptor>>)>,
    limits: Limits,
    server_header: Option<String>,
    compression: Option<Compression>,
    max_connections: usize,
    listeners_per_address: usize,
    token: Option<ShutdownToken>,
    grace: Duration,
    metrics: bool,
    h2: bool,
    h2_max_parked: usize,
}

impl Default for ServerBuilder {
    fn default() -> Self {
        ServerBuilder {
            addrs: Vec::new(),
            limits: Limits::default(),
            server_header: Some(DEFAULT_SERVER_HEADER.to_string()),
            compression: None,
            max_connections: limits::DEFAULT_MAX_CONNECTIONS,
            listeners_per_address: 1,
            token: None,
            grace: limits::DEFAULT_SHUTDOWN_GRACE,
            metrics: true,
            h2: true,
            h2_max_parked: crate::h2::DEFAULT_MAX_PARKED,
        }
    }
}

impl ServerBuilder {
    /// Adds a plain-HTTP address to listen on (call again for more addresses).
    pub fn listen(mut self, addr: impl Into<String>) -> Self {
        self.addrs.push((addr.into(), None));
        self
    }

    /// Adds an HTTPS address: connections are wrapped by `acceptor`, whose handshake runs in
    /// the connection's fiber under the acceptor's handshake timeout.
    pub fn listen_tls(mut self, addr: impl Into<String>, acceptor: TlsAcceptor) -> Self {
        self.addrs.push((addr.into(), Some(Arc::new(acceptor))));
        self
    }

    /// Binds `n` listeners per address with SO_REUSEPORT (one per worker, so the kernel spreads
    /// connections); default 1, a single listener without reuse-port.
    pub fn listeners_per_address(mut self, n: usize) -> Self {
        self.listeners_per_address = n;
        self
    }

    /// Replaces every limit at once (default [`Limits::default`]).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Longest request line (default [`limits::DEFAULT_MAX_REQUEST_LINE`]; breach: 414).
    pub fn max_request_line(mut self, n: usize) -> Self {
        self.limits.max_request_line = n;
        self
    }

    /// Largest request head (default [`limits::DEFAULT_MAX_HEAD`]; breach: 431).
    pub fn max_head(mut self, n: usize) -> Self {
        self.limits.max_head = n;
        self
    }

    /// Most header fields (default [`limits::DEFAULT_MAX_HEADERS`]; breach: 431).
    pub fn max_headers(mut self, n: usize) -> Self {
        self.limits.max_headers = n;
        self
    }

    /// Largest request body (default [`limits::DEFAULT_MAX_BODY`]; breach: 413).
    pub fn max_body(mut self, n: u64) -> Self {
        self.limits.max_body = n;
        self
    }

    /// Most unread body bytes drained to keep a connection (default
    /// [`limits::DEFAULT_MAX_DRAIN`]; beyond it the connection closes).
    pub fn max_drain(mut self, n: u64) -> Self {
        self.limits.max_drain = n;
        self
    }

    /// Time for a whole request head (default [`limits::DEFAULT_HEADER_TIMEOUT`]; breach: 408).
    pub fn header_timeout(mut self, d: Duration) -> Self {
        self.limits.header_timeout = d;
        self
    }

    /// Longest body stall (default [`limits::DEFAULT_BODY_TIMEOUT`]; breach: 408).
    pub fn body_timeout(mut self, d: Duration) -> Self {
        self.limits.body_timeout = d;
        self
    }

    /// How long an idle connection waits in its fiber before parking (default
    /// [`limits::DEFAULT_PARK_AFTER`]; zero parks at once).
    pub fn park_after(mut self, d: Duration) -> Self {
        self.limits.park_after = d;
        self
    }

    /// Idle keep-alive wait (default [`limits::DEFAULT_KEEP_ALIVE_TIMEOUT`]; then close).
    pub fn keep_alive_timeout(mut self, d: Duration) -> Self {
        self.limits.keep_alive_timeout = d;
        self
    }

    /// Longest write stall (default [`limits::DEFAULT_WRITE_TIMEOUT`]; then close).
    pub fn write_timeout(mut self, d: Duration) -> Self {
        self.limits.write_timeout = d;
        self
    }

    /// Most connections served at once; over the cap a client is answered 503 with
    /// `Retry-After` and closed (default
    /// [`limits::DEFAULT_MAX_CONNECTIONS`]).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n;
        self
    }

    /// The `Server` header value, or `None` for no header (default
    /// [`DEFAULT_SERVER_HEADER`]).
    pub fn server_header(mut self, value: Option<&str>) -> Self {
        self.server_header = value.map(str::to_string);
        self
    }

    /// Compresses eligible responses (default: off).
    pub fn compression(mut self, c: Option<Compression>) -> Self {
        self.compression = c;
        self
    }

    /// The token that stops the server (default: a new token; see [`Server::shutdown`]).
    /// Pass `moria_runtime::shutdown::global()` to stop on SIGINT/SIGTERM.
    pub fn shutdown_token(mut self, token: ShutdownToken) -> Self {
        self.token = Some(token);
        self
    }

    /// How long a graceful shutdown lets in-flight requests finish (default
    /// [`limits::DEFAULT_SHUTDOWN_GRACE`]).
    pub fn shutdown_grace(mut self, d: Duration) -> Self {
        self.grace = d;
        self
    }

    /// Records request, byte and duration metrics for `/metrics` (default on; off leaves only
    /// the connection counters of [`ServerStats`](crate::ServerStats)).
    pub fn metrics(mut self, on: bool) -> Self {
        self.metrics = on;
        self
    }

    /// Whether HTTP/2 is served (default on): over TLS when ALPN chose `h2` (the acceptor
    /// must offer it: `TlsAcceptorBuilder::alpn(&["h2", "http/1.1"])`), and on plain
    /// listeners to clients that open with the HTTP/2 preface (h2c with prior knowledge).
    pub fn h2(mut self, on: bool) -> Self {
        self.h2 = on;
        self
    }

    /// Most HTTP/2 streams, across all connections, that wait at once on a send window (their
    /// own or their connection's) that the client holds at 0 (default 1,024): each holds a
    /// fiber until the window opens or the write timeout; past the cap such a stream is reset
    /// with ENHANCE_YOUR_CALM, and a connection with 32 streams reset for a shut window (so,
    /// or at the write timeout) is closed with GOAWAY(ENHANCE_YOUR_CALM).
    pub fn h2_max_parked(mut self, n: usize) -> Self {
        self.h2_max_parked = n;
        self
    }

    fn validate(&self) -> Result<()> {
        let l = &self.limits;
        if self.addrs.is_empty() {
            return Err(Error::NoListener);
        }
        if l.max_request_line == 0
            || l.max_head < l.max_request_line
            || l.max_head > u32::MAX as usize
        {
            return Err(Error::Config(
                "max_head must be at least max_request_line (and below 4 GiB)",
            ));
        }
        if l.max_headers == 0 {
            return Err(Error::Config("max_headers must be at least 1"));
        }
        let times = [
            l.header_timeout,
            l.body_timeout,
            l.keep_alive_timeout,
            l.write_timeout,
        ];
        if times.iter().any(Duration::is_zero) {
            return Err(Error::Config("timeouts must be above zero"));
        }
        if self.max_connections == 0 || self.listeners_per_address == 0 {
            return Err(Error::Config(
                "max_connections and listeners_per_address must be at least 1",
            ));
        }
        if self
            .server_header
            .as_deref()
            .is_some_and(|s| !s.bytes().all(|c| (0x20..0x7f).contains(&c)))
        {
            return Err(Error::Config("server header must be printable ASCII"));
        }
        Ok(())
    }

    /// Binds every address and starts serving with `handler`.
    pub fn start(self, handler: impl Handler) -> Result<Server> {
        self.validate()?;
        let token = self.token.clone().unwrap_or_default();
        let mut listeners = Vec::new();
        let mut addrs = Vec::new();
        let mut urls = Vec::new();
        for (addr, tls) in &self.addrs {
            let bound = bind_all(addr, self.listeners_per_address)?;
            let real = bound[0].local_addr().map_err(|source| Error::Bind {
                addr: addr.clone(),
                source,
            })?;
            addrs.push(real);
            urls.push(format!(
                "{}://{real}",
                if tls.is_some() { "https" } else { "http" }
            ));
            listeners.extend(bound.into_iter().map(|l| (l, tls.clone())));
        }
        let shared = Arc::new(Shared {
            cfg: ConnConfig {
                limits: self.limits,
                server_line: self
                    .server_header
                    .map(|v| format!("Server: {v}\r\n").into_bytes()),
                compression: self.compression,
                metrics: self.metrics,
            },
            h2: self.h2,
            h2_parked: Arc::new(crate::h2::Parked::new(self.h2_max_parked)),
            label: addrs[0].to_string(),
            handler: Box::new(handler),
            tracker: Arc::new(Tracker::new(self.max_connections)),
            token: token.clone(),
            aborted: AtomicUsize::new(0),
            counters: Counters::default(),
            refusing: Semaphore::new(MAX_REFUSING),
            lot: ParkingLot::new(accept::wake).map_err(|source| Error::Spawn {
                what: "the parking lot",
                source,
            })?,
            conns: ConnPool::default(),
        });
        crate::metrics::register_server(Arc::downgrade(&shared) as _);
        for (l, tls) in listeners {
            let s = Arc::clone(&shared);
            FiberBuilder::new()
                .name("moria-http-accept")
                .spawn(move || accept_loop(l, tls, s))
                .map_err(|source| Error::Spawn {
                    what: "an accept loop",
                    source,
                })?;
        }
        let done = Arc::new(Event::new(Reset::Manual));
        let (s, d, grace) = (Arc::clone(&shared), Arc::clone(&done), self.grace);
        FiberBuilder::new()
            .name("moria-http-shutdown")
            .spawn(move || supervise(&s, grace, &d))
            .map_err(|source| Error::Spawn {
                what: "the shutdown supervisor",
                source,
            })?;
        log::info!("listening on {}", urls.join(", "));
        Ok(Server {
            addrs,
            token,
            done,
            shared,
        })
    }
}

/// Binds `n` listeners on `addr` (with SO_REUSEPORT when `n > 1`, all on the first one's port).
fn bind_all(addr: &str, n: usize) -> Result<Vec<TcpListener>> {
    let bind_err = |source| Error::Bind {
        addr: addr.to_string(),
        source,
    };
    let opts = ListenOptions {
        reuse_port: n > 1,
        ..ListenOptions::default()
    };
    let first = TcpListener::bind_with(addr, opts).map_err(bind_err)?;
    let real = first.local_addr().map_err(bind_err)?;
    let mut out = vec![first];
    for _ in 1..n {
        out.push(TcpListener::bind_with(real, opts).map_err(bind_err)?);
    }
    Ok(out)
}
