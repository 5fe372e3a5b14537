//! Where a handler's or a layer's error becomes a response: an [`HttpError`] is rendered with
//! its status; a failed body read answers with the body's status (413, 400, 408); anything
//! else is a 500 whose log line carries the peer, the request id and the route (a bare
//! `500 Internal Server Error` page unless the router has an error renderer).

use super::error::HttpError;
use super::render::render;
use crate::handler::{BoxError, HandlerResult};
use crate::request::Request;
use crate::response::{respond_error, Response};

/// Leaves `res` the answer for `result`: untouched on success, the rendered error otherwise.
#[inline]
pub(crate) fn settle(result: HandlerResult, req: &Request<'_>, res: &mut Response) {
    if let Err(e) = result {
        fail(e, req, res);
    }
}

#[cold]
fn fail(e: BoxError, req: &Request<'_>, res: &mut Response) {
    let err = HttpError::from(e);
    let err = match (err.status(), req.body.failure()) {
        (500, Some(f)) => HttpError::from_failure(f),
        _ => err,
    };
    if err.status() >= 500 {
        log::error!(
            "{} {} {} request-id {}: {err}",
            req.peer_addr(),
            req.method_str(),
            req.path(),
            req.request_id().unwrap_or("-"),
        );
    }
    if err.cause().is_some() && req.ext.renderer.is_none() {
        // An error that is not the application's own answer: the bare page, as before.
        respond_error(res, err.status());
        return;
    }
    render(&err, req, res);
}
