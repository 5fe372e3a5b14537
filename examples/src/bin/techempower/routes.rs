//! The seven TFB handlers and the router that mounts them.

use moria_http::{HandlerResult, Request, Response, Router};
use serde::Serialize;

use crate::fortune;
use crate::store::Store;
use crate::world::{distinct_by_id, query_count, renumber, Rng, World};

/// What every handler shares: the database and the World cache for `/cached-queries`.
pub struct App {
    store: Store,
    cache: Vec<World>,
}

impl App {
    /// Fills the World cache from `store`.
    pub fn new(store: Store) -> Result<App, moria_http::BoxError> {
        let mut cache = store.all_worlds()?;
        cache.sort_unstable_by_key(|w| w.id);
        Ok(App { store, cache })
    }

    fn cached(&self, id: i32) -> Option<World> {
        // Ids are 1..=10000 and the cache is sorted; a table edited by hand may have holes.
        match self.cache.get((id - 1) as usize) {
            Some(w) if w.id == id => Some(*w),
            _ => self
                .cache
                .binary_search_by_key(&id, |w| w.id)
                .ok()
                .map(|i| self.cache[i]),
        }
    }
}

/// `{"message":"Hello, World!"}`, serialised per request.
#[derive(Serialize)]
struct Message {
    message: &'static str,
}

fn queries(req: &Request<'_>, name: &str) -> usize {
    query_count(req.query_param(name).as_deref())
}

fn plaintext(_req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.content_type("text/plain").body("Hello, World!");
    Ok(())
}

fn hello_json(_req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    // Serialised into the response's own buffer, which keeps its capacity between requests.
    res.json(&Message {
        message: "Hello, World!",
    })?;
    Ok(())
}

fn db(app: &App, _req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    res.json(&app.store.world(Rng::new().world_number())?)?;
    Ok(())
}

fn many(app: &App, req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let ids = Rng::new().ids(queries(req, "queries"));
    res.json(&app.store.worlds(&ids)?)?;
    Ok(())
}

fn cached(app: &App, req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let ids = Rng::new().ids(queries(req, "count"));
    let rows: Option<Vec<World>> = ids.iter().map(|&id| app.cached(id)).collect();
    res.json(&rows.ok_or("World id missing from the cache")?)?;
    Ok(())
}

fn updates(app: &App, req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let mut rng = Rng::new();
    let ids = rng.ids(queries(req, "queries"));
    let mut rows = app.store.worlds(&ids)?;
    renumber(&mut rows, &mut rng);
    app.store.update(&distinct_by_id(&rows))?;
    res.json(&rows)?;
    Ok(())
}

fn fortunes(app: &App, _req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let page = fortune::page(app.store.fortunes()?);
    res.content_type("text/html; charset=utf-8").body(page);
    Ok(())
}

/// The router for the seven test types.
pub fn router(app: App) -> Router<App> {
    Router::with_state(app)
        .get("/plaintext", plaintext)
        .get("/json", hello_json)
        .get("/db", db)
        .get("/queries", many)
        .get("/cached-queries", cached)
        .get("/updates", updates)
        .get("/fortunes", fortunes)
}
