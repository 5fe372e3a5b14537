//! An HTTP/1.1 client as blocking code on fibers: pooled keep-alive connections, TLS,
//! redirects, gzip/deflate, proxies, Digest and Basic auth, timeouts. Build one [`Client`], clone it freely (clones share the
//! pool), and call it from any number of fibers.
//!
//! ```no_run
//! let client = moria_http::client::Client::new()?;
//! let text = client.get("http://127.0.0.1:8080/hello").send()?.text()?;
//! # Ok::<(), moria_http::client::Error>(())
//! ```
//!
//! | file | what |
//! |---|---|
//! | `auth.rs` | Digest (SHA-256, MD5) and Basic answers to `401` |
//! | `builder.rs` | [`ClientBuilder`]: settings, each default a named constant |
//! | `request.rs` | [`RequestBuilder`]: headers, query, body; `send` with redirects |
//! | `exchange.rs` | one request on one connection, `100-continue`; the retry on a dead reused connection |
//! | `send.rs` | request bodies and the writes of head and body |
//! | `conn.rs` | DNS on the offload pool, TCP connect (also [`Client::connect_tcp`]), TLS; the open connection with its per-read timeouts |
//! | `timing.rs` | the deadline and per-wait timeout one request runs under |
//! | `pool.rs` | idle connections per origin, the per-host cap, fiber-parking waits |
//! | `proxy.rs` | HTTP proxies, CONNECT tunnels, `NO_PROXY`, proxy credentials |
//! | `body_reader.rs` | the response body as framed on the wire (length, chunked, until close); hands the connection back when done |
//! | `decode.rs` | gzip/deflate decoding and the decompression-bomb guard |
//! | `response.rs` | [`Response`], [`Headers`]: `Read`, `text`, `bytes`, `json` |
//! | `read.rs` | [`read_response`]: the same decoder on any `BufRead` (raw probes, pipelining) |
//! | `url.rs` | [`Url`]: http/https URLs, reference resolution for redirects |
//! | `websocket.rs` | [`Client::websocket`]: `ws://` and `wss://`, the client's handshake |
//! | `error.rs` | [`Error`]: one variant per kind of failure, each naming the URL |
//!
//! The wire format is the crate's HTTP/1.1 codec (`h1/`), shared with the server.

mod auth;
mod body_reader;
mod builder;
mod conn;
mod decode;
mod error;
mod exchange;
mod pool;
mod proxy;
mod read;
mod request;
mod response;
mod send;
mod timing;
mod url;
mod websocket;

use std::sync::Arc;
use std::time::Duration;

use moria_crypto::TlsConnector;
use moria_runtime::net::TcpStream;
use moria_runtime::Deadline;

pub use builder::{
    ClientBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_CONTINUE_TIMEOUT, DEFAULT_EXPECT_CONTINUE_MIN,
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_BODY, DEFAULT_MAX_IDLE_PER_HOST, DEFAULT_MAX_OPEN_PER_HOST,
    DEFAULT_MAX_REDIRECTS, DEFAULT_POOL_TIMEOUT, DEFAULT_READ_TIMEOUT, DEFAULT_USER_AGENT,
};
pub use decode::{DEFAULT_BOMB_AFTER, DEFAULT_BOMB_RATIO};
pub use error::{Error, Phase, Result, Violation};
pub use moria_streams::chunked::TrailerField;
pub use read::{read_response, RawResponse};
pub use request::RequestBuilder;
pub use response::{Headers, Response};
pub use url::Url;
pub use websocket::WebSocketBuilder;

use crate::limits::Limits;
use decode::BombGuard;
use pool::Pool;
use proxy::Proxies;
use timing::Timing;

/// An HTTP client: settings, TLS roots and the connection pool, shared by its clones.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

/// What the clones of a client share.
pub(crate) struct Inner {
    pub(crate) config: Config,
    pub(crate) tls: TlsConnector,
    pub(crate) pool: Pool,
    pub(crate) proxies: Proxies,
}

/// Per-request settings copied from the builder.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub timeout: Option<Duration>,
    pub pool_timeout: Duration,
    pub max_redirects: usize,
    pub decompress: bool,
    pub max_body: u64,
    pub bomb: BombGuard,
    pub user_agent: Option<String>,
    pub head_limits: Limits,
    pub expect_continue: Option<u64>,
    pub continue_timeout: Duration,
}

impl Client {
    /// A client with default settings.
    pub fn new() -> Result<Client> {
        ClientBuilder::new().build()
    }

    /// A builder starting from the defaults.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// A GET request for `url`.
    pub fn get(&self, url: &str) -> RequestBuilder {
        self.request("GET", url)
    }

    /// A HEAD request for `url`.
    pub fn head(&self, url: &str) -> RequestBuilder {
        self.request("HEAD", url)
    }

    /// A POST request to `url`.
    pub fn post(&self, url: &str) -> RequestBuilder {
        self.request("POST", url)
    }

    /// A PUT request to `url`.
    pub fn put(&self, url: &str) -> RequestBuilder {
        self.request("PUT", url)
    }

    /// A DELETE request for `url`.
    pub fn delete(&self, url: &str) -> RequestBuilder {
        self.request("DELETE", url)
    }

    /// A request with any method token for `url`.
    pub fn request(&self, method: &str, url: &str) -> RequestBuilder {
        RequestBuilder::new(self.clone(), method, url)
    }

    /// A raw TCP connection to `host:port` for any protocol (a tunnel, not HTTP): through the
    /// client's https proxy with `CONNECT` unless `NO_PROXY` covers `host`, else direct;
    /// resolution, connect and the proxy's answer within the client's timeouts. An IPv6
    /// `host` is written without brackets.
    pub fn connect_tcp(&self, host: &str, port: u16) -> Result<TcpStream> {
        let authority = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let spec = format!("https://{authority}/");
        let url = Url::parse(&spec).map_err(|reason| Error::InvalidUrl { url: spec, reason })?;
        let config = &self.inner.config;
        let timing = Timing {
            deadline: config.timeout.map(Deadline::after),
            idle: config.read_timeout,
        };
        let proxy = self.inner.proxies.for_url(&url);
        conn::dial(&url, proxy, config.connect_timeout, &timing)
    }

    /// Connections open to `url`'s origin right now, idle ones included.
    pub fn open_connections(&self, url: &Url) -> usize {
        let proxy = self.inner.proxies.for_url(url);
        self.inner.pool.host(url, proxy).open()
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}

    #[test]
    fn clients_are_shared_and_responses_move_between_fibers() {
        send_sync::<Client>();
        send::<Response>();
        send::<RequestBuilder>();
    }
}
