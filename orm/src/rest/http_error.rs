//! The ORM's errors as HTTP answers outside the REST handler: `HttpError::from(orm_error)` (the
//! status of [`status_of`], `Retry-After` when the database is busy; a 500 keeps the error
//! for the log only), and [`mormot_error`], an error renderer writing mORMot's
//! `{"errorCode":N,"errorText":"…"}` for a router's layers and handlers.

use moria_http::{HttpError, Request, Response};

use super::{status_of, RETRY_AFTER_SECS};
use crate::error::Error;

impl From<Error> for HttpError {
    fn from(e: Error) -> HttpError {
        match status_of(&e) {
            500 => HttpError::internal(e),
            503 => HttpError::unavailable(e.to_string(), u64::from(RETRY_AFTER_SECS)),
            status => HttpError::new(status, e.to_string()),
        }
    }
}

/// Renders errors as mORMot's `{"errorCode":N,"errorText":"…"}` (for
/// `Router::error_renderer`), so a router's auth layers answer like the REST handler.
pub fn mormot_error(err: &HttpError, _req: &Request<'_>, res: &mut Response) {
    let body = serde_json::json!({ "errorCode": err.status(), "errorText": err.message() });
    res.status(err.status())
        .content_type("application/json; charset=utf-8")
        .body(body.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orm_errors_map_to_their_status() {
        let e = HttpError::from(Error::NoSuchTable("Nope".into()));
        assert_eq!(e.status(), 404);
        let e = HttpError::from(Error::BadRequest("bad id".into()));
        assert_eq!((e.status(), e.message()), (400, "bad request: bad id"));
    }
}
