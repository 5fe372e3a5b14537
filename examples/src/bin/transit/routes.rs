//! The router: `GET /schedules/:route_id` (gzip, when the client asks, is the server's
//! compression layer's job).

use std::sync::Arc;

use moria_http::{HandlerResult, Request, Response, Router};

use crate::json;
use crate::store::Store;

/// One route's trips and stop times as JSON (`[]` for an unknown route): written into the
/// response buffer, or streamed when larger than `stream_over` bytes.
fn schedules(
    store: &Arc<Store>,
    stream_over: usize,
    req: &Request<'_>,
    res: &mut Response,
) -> HandlerResult {
    let range = store.route(req.param("route_id").unwrap_or_default());
    let size = json::size(store, range.clone());
    res.content_type("application/json");
    if size > stream_over {
        res.body(json::stream_route(store.clone(), range, size));
    } else {
        json::write_route(store, range, size, res.body_mut());
    }
    Ok(())
}

/// The router over `store`; bodies over `stream_over` bytes are streamed.
pub fn router(store: Arc<Store>, stream_over: usize) -> Router {
    Router::new().get(
        "/schedules/:route_id",
        move |req: &mut Request<'_>, res: &mut Response| schedules(&store, stream_over, req, res),
    )
}
