//! moria-http glue: [`Rest`] as a [`Handler`], and [`Rest::routes`] to mount it on a router.
//!
//! A body over the limit is refused from its `Content-Length` (or while reading a chunked one)
//! without being buffered. Authentication layers on the router run before any of this.

use std::io::Read;
use std::sync::Arc;

use moria_http::{Handler, HandlerResult, Method, Request, Response, Router};

use super::{Rest, RestRequest, RestResponse};

impl Rest {
    /// Adds GET/POST/PUT/DELETE routes for `/{root}/*` to `router`.
    pub fn routes(self, router: Router) -> Router {
        let pattern = format!("/{}/*path", self.root);
        let rest: Arc<dyn Handler> = Arc::new(self);
        [Method::Get, Method::Post, Method::Put, Method::Delete]
            .into_iter()
            .fold(router, |r, m| r.route(m, &pattern, Arc::clone(&rest)))
    }
}

fn send(res: &mut Response, r: RestResponse) {
    res.status(r.status);
    for (name, value) in &r.headers {
        res.header(name, value);
    }
    if !r.body.is_empty() {
        res.content_type("application/json; charset=utf-8");
        res.body(r.body);
    }
}

impl Handler for Rest {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
        let limit = self.max_body;
        let declared = req.body().content_length().unwrap_or(0);
        if declared > limit as u64 {
            res.close();
            send(
                res,
                self.too_large(usize::try_from(declared).unwrap_or(usize::MAX)),
            );
            return Ok(());
        }
        let mut body = Vec::with_capacity(declared as usize);
        req.body().take(limit as u64 + 1).read_to_end(&mut body)?;
        if body.len() > limit {
            res.close();
            send(res, self.too_large(body.len()));
            return Ok(());
        }
        let answer = self.handle_within_limit(&RestRequest {
            method: req.method_str(),
            path: req.path(),
            query: req.query().unwrap_or(""),
            body: &body,
        });
        send(res, answer);
        Ok(())
    }
}
