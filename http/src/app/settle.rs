//! Where a handler's or a layer's error becomes a response: an [`HttpError`] is rendered with
//! its status; a failed body read answers with the body's status (413, 400, 408); anything
//! else is a 500 whose log line carries the peer, the request id and the route.

use super::error::HttpError;
use super::render::render;
use crate::handler::{BoxError, HandlerResult};
use crate::request::Request;
use crate::response::Response;

/// Leaves `res` the answer for `result`: untouched on success, the rendered error otherwise.
#[inline]
pub(crate) fn settle(result: HandlerResult, req: &Request<'_>, res: &mut Response) {
    if let Err(e) = result {
        fail(e, req, res);
    }
}

#[cold]
fn fail(e: BoxError, req: &Request<'_>, res: &mut Response) {
    let mut err = HttpError::from(e);
    if err.status() == 500 {
        if let Some(f) = req.body.failure() {
            err = HttpError::from_failure(f);
        }
    }
    if err.status() >= 500 {
        log::error!(
            "{} {} {} request-id {}: {err}",
            req.peer_addr(),
            req.method_str(),
            req.path(),
            req.request_id().unwrap_or("-"),
        );
    }
    render(&err, req, res);
}
