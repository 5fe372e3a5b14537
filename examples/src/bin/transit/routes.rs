//! The router: `GET /schedules/:route_id` (gzip, when the client asks, is the server's
//! compression layer's job).

use std::sync::Arc;

use moria_http::{HandlerResult, Request, Response, Router};

use crate::json;
use crate::store::Store;

/// One route's trips and stop times as JSON (`[]` for an unknown route).
fn schedules(store: &Store, req: &Request<'_>, res: &mut Response) -> HandlerResult {
    let trips = store.route(req.param("route_id").unwrap_or_default());
    json::write_route(
        store,
        trips,
        res.content_type("application/json").body_mut(),
    );
    Ok(())
}

/// The router over `store`.
pub fn router(store: Arc<Store>) -> Router {
    Router::new().get(
        "/schedules/:route_id",
        move |req: &mut Request<'_>, res: &mut Response| schedules(&store, req, res),
    )
}
