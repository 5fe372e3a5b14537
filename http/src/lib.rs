//! moria-http: an HTTP/1.1 server (HTTP and HTTPS) written as blocking code on Moria's fibers.
//!
//! Module map:
//! - [`limits`]: every protocol limit and timeout as a named constant, with its status code.
//! - [`method`]: [`Method`] and [`Version`].
//! - [`request`]: [`Request`], a view over the parsed head; [`body`]: [`RequestBody`] (`Read`).
//! - [`response`]: [`Response`], [`Body`] (bytes, reader, file, stream), [`respond_error`].
//! - [`handler`]: the [`Handler`] trait (any `Fn(&mut Request, &mut Response)` is one).
//! - [`stream`]: [`respond_stream`]: HEAD, single and multiple byte ranges, If-Range.
//! - [`range`]: Range header parsing and merging; [`compress`]: Accept-Encoding negotiation and
//!   gzip/deflate; [`percent`]: path and query decoding; [`status`]: reason phrases.
//! - [`router`]: [`Router`]: `/users/:id`, `/static/*rest`, automatic 404/405 + Allow; state
//!   (`Router::with_state`), layers, `nest`/`mount`, fallback, error renderer.
//! - [`app`]: writing an application: [`HttpError`] and its renderers, typed extractors
//!   (`req.json()`, `query_as`, `form`, `param_as`, `res.json()`), [`Layer`]/[`Next`],
//!   request extensions, cookies (signed, encrypted). [`layer`]: the layers (request id,
//!   access log, CORS, compression, Basic and Bearer auth, rate limit, deadline, security
//!   headers). [`testing`]: calling a handler in-process with a built request.
//! - [`static_files`]: [`StaticFiles`]: a directory tree served with confinement, listing pages,
//!   caching headers, conditional and range requests, precompressed and on-the-fly gzip,
//!   uploads (multipart POST, PUT) and streamed `.tar` / `.tar.gz` archives of directories.
//! - [`multipart`]: `multipart/form-data` streamed: [`multipart::Multipart`] reads a body
//!   part by part, [`multipart::Form`] builds one for the client.
//! - [`client`]: [`client::Client`]: outbound HTTP/HTTPS with a pool, redirects, decoding.
//! - [`server`]: [`Server`] / [`ServerBuilder`]: listeners, connection cap, graceful shutdown.
//! - [`metrics`]: the `/metrics` handler (Prometheus text or OpenMetrics) and the server's
//!   collector: connections, requests by method and status class, bytes, TLS handshakes, request
//!   durations per route pattern.
//! - [`health`]: `/healthz` and `/readyz` probes ([`health::Readiness`]: 503 while draining or
//!   while a check fails).
//! - [`access_log`]: Common, Combined or JSON lines through `log`, [`access_log::AccessLogger`]
//!   to stderr or a file reopened on SIGHUP; [`html`]: HTML text escaping.
//! - [`ws`]: WebSocket (RFC 6455, permessage-deflate): [`ws::Acceptor`] upgrades a request,
//!   [`ws::WebSocket`] reads and sends; `upgrade` (private): the hand-off after the 101.
//! - `h1` (private): the HTTP/1.1 codec both roles share, laid out as hyper's `proto/h1`:
//!   `decode/` (head scanner, request and response head parsers, field grammar, body framing
//!   and body decoder), `encode/` (request and response heads), `role/server/` (connection
//!   loop, buffers, failure → status, the shared `Date` cache), `role/client/` (response head
//!   reading). It names no application type.
//! - `h2` (private): HTTP/2 (RFC 9113, HPACK): frames, settings, HPACK, the connection loop
//!   (flow control, stream states, attack bounds), a stream's body reader and response sender;
//!   h2 by ALPN on HTTPS and by the preface on plain listeners ([`ServerBuilder::h2`]).
//! - `dispatch` (private): the one seam between protocols and the application: `Dispatcher`
//!   (tracker, `catch_unwind`, counters, errors → their response through `app::settle`),
//!   `dispatch/h1` (a parsed h1 head → `Request` → handler → `Response` → the codec's encoder)
//!   and `dispatch/h2` (a stream → the same `Request` → handler → HEADERS and DATA). `counters` (private): the
//!   server's event counters. `source` (private): [`Source`] and the multipart/byteranges body.
//! - `fuzzing` (feature `fuzzing`, hidden): the head scanner and parser over a byte slice, for
//!   bench's `fuzz_h1`; one HTTP/2 connection over a byte slice, for `fuzz_h2`.
//! - `http_date` (private): IMF-fixdate text for `Date` and `Last-Modified`.
//! - `transport` (private): what the loop needs from TCP or TLS (timeouts, sendfile);
//!   `tls` (private): the HTTPS transport and handshake; `tracker` (private): live connections.
#![warn(missing_docs)]

pub mod access_log;
pub mod app;
pub mod body;
pub mod client;
pub mod compress;
mod counters;
mod dispatch;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod h1;
mod h2;
pub mod handler;
pub mod health;
pub mod html;
mod http_date;
pub mod layer;
pub mod limits;
pub mod method;
pub mod metrics;
pub mod multipart;
pub mod percent;
pub mod range;
pub mod request;
pub mod response;
pub mod router;
pub mod server;
mod source;
pub mod static_files;
pub mod status;
pub mod stream;
pub mod testing;
mod tls;
mod tls_info;
mod tracker;
mod transport;
mod upgrade;
pub mod ws;

pub use app::{Cookie, HttpError, Layer, Next};
pub use body::RequestBody;
pub use error::{Error, Result};
pub use handler::{BoxError, Handler, HandlerResult};
pub use limits::Limits;
pub use method::{Method, Version};
pub use request::Request;
pub use response::{respond_error, Body, Response};
pub use router::Router;
pub use server::{Server, ServerBuilder, ServerStats, ShutdownReport};
pub use static_files::{StaticFiles, StaticFilesBuilder};
pub use stream::{respond_stream, Source, StreamInfo};
pub use tls_info::TlsInfo;
