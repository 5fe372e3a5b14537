//! A `tracing` span per request (feature `tracing`): `request` with the method and target when
//! the handler starts; the route pattern, status, duration and request id recorded when it
//! ends. Entered while the handler runs, so the handler's events and spans (ORM statements
//! too) nest under it: with moria-runtime's `trace::FiberRegistry` the span follows the
//! connection's fiber across workers.

use std::time::Instant;

use tracing::field::Empty;
use tracing::Span;

use crate::request::Request;
use crate::response::Response;

/// The span of a request about to be handled.
pub(super) fn request_span(req: &Request<'_>) -> Span {
    tracing::info_span!(
        "request",
        method = req.method_str(),
        target = req.target(),
        route = Empty,
        status = Empty,
        duration_us = Empty,
        request_id = Empty,
    )
}

/// Records what the handler settled on `span`.
pub(super) fn finish(span: &Span, req: &Request<'_>, res: &Response, started: Instant) {
    if let Some(route) = req.route_pattern() {
        span.record("route", route);
    }
    span.record("status", res.status_code());
    span.record(
        "duration_us",
        u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
    );
    let id = res
        .get_header("x-request-id")
        .or_else(|| req.header("x-request-id"));
    if let Some(id) = id.and_then(|v| std::str::from_utf8(v).ok()) {
        span.record("request_id", id);
    }
}
