//! Turning an [`HttpError`] into a response: RFC 9457 problem details (the default), a small
//! HTML page, or a renderer of the application's own ([`crate::Router::error_renderer`]).

use std::sync::Arc;

use super::error::HttpError;
use crate::html::escape_into;
use crate::request::Request;
use crate::response::Response;
use crate::status::reason;

/// An error renderer: fills the (already reset) response for the error; the error's own
/// headers are added after it.
pub type Renderer = Arc<dyn Fn(&HttpError, &Request<'_>, &mut Response) + Send + Sync>;

/// RFC 9457 `application/problem+json`: `type`, `title`, `status`, `detail` and the error's
/// extension members.
pub fn problem_json(err: &HttpError, _req: &Request<'_>, res: &mut Response) {
    let mut doc = serde_json::Map::new();
    doc.insert("type".into(), "about:blank".into());
    doc.insert("title".into(), reason(err.status()).into());
    doc.insert("status".into(), err.status().into());
    doc.insert("detail".into(), err.message().into());
    if let Some(members) = err.members() {
        for (k, v) in members {
            doc.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    res.status(err.status())
        .content_type("application/problem+json");
    // A map of strings and numbers always serialises.
    let _ = serde_json::to_writer(res.body_mut(), &doc);
}

/// A small HTML page with the status, reason and (escaped) message.
pub fn html(err: &HttpError, _req: &Request<'_>, res: &mut Response) {
    let mut page = String::with_capacity(256);
    let title = format!("{} {}", err.status(), reason(err.status()));
    page.push_str("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
    escape_into(&title, &mut page);
    page.push_str("</title></head><body><h1>");
    escape_into(&title, &mut page);
    page.push_str("</h1><p>");
    escape_into(err.message(), &mut page);
    page.push_str("</p></body></html>\n");
    res.status(err.status())
        .content_type("text/html; charset=utf-8")
        .body(page);
}

/// Renders `err` into `res` with the request's renderer (problem details when none was set),
/// then adds the error's headers.
pub(crate) fn render(err: &HttpError, req: &Request<'_>, res: &mut Response) {
    res.reset();
    match &req.ext.renderer {
        Some(r) => r(err, req, res),
        None => problem_json(err, req, res),
    }
    for (name, value) in err.headers() {
        res.header(name, value);
    }
}
