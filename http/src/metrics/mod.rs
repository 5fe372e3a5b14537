//! The HTTP server's metrics for Prometheus: the `/metrics` [`handler`] (content negotiated:
//! Prometheus text or OpenMetrics), the server collector (connections, requests by method and
//! status class, bytes, TLS handshakes, panics), and the request duration histograms per route
//! pattern.
//!
//! - `collect.rs`: the live servers and the collector registered with moria-runtime's
//!   [`metrics`](moria_runtime::metrics) registry.
//! - `routes.rs`: [`RouteStat`]: one histogram per routed `(method, pattern)`, plus one per
//!   method for requests no route matched; the label set is bounded by the routes defined.
//! - `client.rs`: the HTTP client's figures per origin host.
//! - `metered.rs`: the transport wrapper that counts bytes in and out.
//! - `tally.rs`: `Tally`: HTTP/1.1's requests counted per batch of answers written together,
//!   added to the shared figures once per batch.
//! - here: [`handler`].
//!
//! Recording costs relaxed atomic adds only: a counter per answered request (per batch of
//! answers on HTTP/1.1), a histogram bucket, sum and count, and one add per read or write call
//! on the socket.

mod client;
mod collect;
mod metered;
mod routes;
mod tally;

use moria_runtime::metrics::{gather, Format};

use crate::handler::{Handler, HandlerResult};
use crate::request::Request;
use crate::response::Response;

pub(crate) use client::{figures_for, register_host, ClientFigures, HostView};
pub(crate) use collect::register_server;
pub(crate) use collect::ServerView;
pub(crate) use metered::Metered;
pub(crate) use routes::unrouted;
pub use routes::RouteStat;
pub(crate) use tally::Tally;

/// The `/metrics` handler: every registered collector (runtime, HTTP, client, ORM) as
/// Prometheus text, or OpenMetrics when the scraper's `Accept` asks for it.
pub fn handler() -> impl Handler {
    collect::register();
    |req: &mut Request<'_>, res: &mut Response| -> HandlerResult {
        let format = Format::negotiate(req.header_str("accept"));
        res.content_type(format.content_type()).body(gather(format));
        Ok(())
    }
}
