//! The one seam between the protocols and the application. A protocol's codec parses a request
//! head and frames a body reader; the dispatch builds the [`Request`], runs the [`Handler`] and
//! hands back the [`Response`] (head and body) for the codec to send. Everything a request
//! costs the server besides bytes happens here, once for every protocol: the tracker's phase
//! and route (what the reclaimer logs if the fiber dies), `catch_unwind`, the panic counter,
//! handler errors and invalid responses turned into a logged 500.
//!
//! - here: [`Dispatcher`], the protocol-neutral part.
//! - `trace.rs` (feature `tracing`): the span each request runs in.
//! - `h1/`: HTTP/1.1 — the codec's connection loop calls it through `h1::Dispatch` for each
//!   parsed head (`mod.rs`), and it writes the response back through the codec's encoder
//!   (`respond.rs`).
//!
//! - `h2.rs`: HTTP/2 — each stream, in its fiber, builds the same `Request` from the stream's
//!   head and body and calls [`Dispatcher::call`]; the response goes out as HEADERS and DATA
//!   (http/README.md, "How a request reaches a handler").

pub(crate) mod h1;
pub(crate) mod h2;
#[cfg(feature = "tracing")]
mod trace;
pub(crate) mod ws;

use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};

use moria_runtime::panic_message;

use crate::app::settle::settle;
use crate::counters::Counters;
use crate::handler::Handler;
use crate::request::Request;
use crate::response::{respond_error, Response};
use crate::tls_info::TlsInfo;
use crate::tracker::ConnState;

/// What dispatching needs on one connection, whatever its protocol.
pub(crate) struct Dispatcher<'c> {
    /// The application.
    pub handler: &'c dyn Handler,
    /// The client's address.
    pub peer: SocketAddr,
    /// What the TLS handshake settled, on HTTPS.
    pub tls: Option<&'c TlsInfo>,
    /// What the connection is doing (idle flag for shutdown, phase and route for reclaiming).
    pub state: &'c ConnState,
    /// The server's event counters.
    pub counters: &'c Counters,
}

impl Dispatcher<'_> {
    /// Runs the handler for `req` into `res`, with `route` (`METHOD target` as received) in the
    /// tracker while it runs (`fresh`: no earlier answer of this connection is still unsent).
    /// A handler error becomes its response (an `HttpError` its status, anything else a
    /// logged 500: `app::settle`); a panic or an invalid response leaves `res` a 500 and is
    /// logged with `log_route()`; a panic is counted.
    pub(crate) fn call(
        &self,
        route: &[u8],
        fresh: bool,
        req: &mut Request<'_>,
        res: &mut Response,
        log_route: impl Fn() -> String,
    ) {
        self.state.handling(route, fresh);
        #[cfg(feature = "tracing")]
        let (span, started) = (trace::request_span(req), std::time::Instant::now());
        #[cfg(feature = "tracing")]
        let entered = span.enter();
        let result = catch_unwind(AssertUnwindSafe(|| self.handler.handle(req, res)));
        match result {
            Ok(r) => settle(r, req, res),
            Err(payload) => {
                Counters::bump(&self.counters.handler_panics);
                log::error!(
                    "{} {}: handler panicked: {}",
                    self.peer,
                    log_route(),
                    panic_message(&*payload)
                );
                respond_error(res, 500);
            }
        }
        if let Some(why) = res.invalid {
            log::error!("{} {}: invalid response: {why}", self.peer, log_route());
            respond_error(res, 500);
        }
        #[cfg(feature = "tracing")]
        {
            drop(entered);
            trace::finish(&span, req, res, started);
        }
    }
}
