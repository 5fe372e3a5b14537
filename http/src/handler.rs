//! The handler model: a plain function of the request that fills in the response.

use std::sync::Arc;

use crate::request::Request;
use crate::response::Response;

/// Any error a handler may return. An [`crate::app::HttpError`] becomes its own status; any
/// other error is logged (with the request id and route) and the client gets a bare 500.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// What a handler returns.
pub type HandlerResult = Result<(), BoxError>;

/// Serves requests: reads what it needs from the request (blocking calls are fine, they park
/// only this connection's fiber) and fills in the response.
pub trait Handler: Send + Sync + 'static {
    /// Handles one request.
    fn handle(&self, req: &mut Request<'_>, res: &mut Response) -> HandlerResult;
}

/// Any function of request and response returning [`HandlerResult`] (an `HttpError` boxes
/// into it with `?`). The result type is fixed, not generic, so closures need no annotation
/// of it; handlers taking the router's state may return `Result<(), HttpError>`.
impl<F> Handler for F
where
    F: Fn(&mut Request<'_>, &mut Response) -> HandlerResult + Send + Sync + 'static,
{
    fn handle(&self, req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
        self(req, res)
    }
}

impl Handler for Arc<dyn Handler> {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
        (**self).handle(req, res)
    }
}

impl Handler for Box<dyn Handler> {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
        (**self).handle(req, res)
    }
}
