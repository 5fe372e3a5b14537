//! Middleware: a [`Layer`] wraps what comes after it ([`Next`]) and may act before and after
//! it, or answer itself without calling it. A layer is plain blocking code, like a handler.
//!
//! Order: layers run in the order they were added, the first added outermost (it sees the
//! request first and the response last). A router's own layers ([`crate::Router::layer`]) run
//! before routing, so they also see 404, 405 and OPTIONS answers; a route's layers
//! ([`crate::Router::with`]) run after routing, around that route's handler only.

use std::sync::Arc;

use super::settle::settle;
use crate::handler::HandlerResult;
use crate::request::Request;
use crate::response::Response;

/// Middleware around a handler.
pub trait Layer: Send + Sync + 'static {
    /// Handles one request: call `next.run(req, res)` to go on (at most once), or answer in
    /// `res` (or return an [`crate::app::HttpError`]) to stop here.
    fn handle(&self, req: &mut Request<'_>, res: &mut Response, next: Next<'_>) -> HandlerResult;
}

impl<F> Layer for F
where
    F: Fn(&mut Request<'_>, &mut Response, Next<'_>) -> HandlerResult + Send + Sync + 'static,
{
    fn handle(&self, req: &mut Request<'_>, res: &mut Response, next: Next<'_>) -> HandlerResult {
        self(req, res, next)
    }
}

/// What the end of a chain calls.
pub(crate) type End<'n> = &'n dyn Fn(&mut Request<'_>, &mut Response) -> HandlerResult;

/// The rest of a layer chain: the layers after this one, then the handler.
pub struct Next<'n> {
    layers: &'n [Arc<dyn Layer>],
    end: End<'n>,
}

impl<'n> Next<'n> {
    /// A chain of `layers` around `end`.
    pub(crate) fn new(layers: &'n [Arc<dyn Layer>], end: End<'n>) -> Self {
        Next { layers, end }
    }

    /// Runs the rest of the chain; afterwards `res` holds its answer, errors included (they
    /// are rendered here, so a layer sees the final status).
    pub fn run(self, req: &mut Request<'_>, res: &mut Response) {
        let result = match self.layers.split_first() {
            Some((layer, rest)) => layer.handle(req, res, Next::new(rest, self.end)),
            None => (self.end)(req, res),
        };
        settle(result, req, res);
    }
}
