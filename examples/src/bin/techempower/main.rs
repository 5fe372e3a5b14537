//! techempower: the seven TechEmpower Framework Benchmarks test types on moria-http and
//! moria-orm, on SQLite or PostgreSQL.
//!
//! ```text
//! techempower --db tfb.db --init                      # create and fill World and Fortune
//! techempower --db tfb.db --listen 127.0.0.1:8080     # serve
//! techempower --db postgres://user:pass@host/hello_world --init
//! techempower --db postgres://user:pass@host/hello_world --listen 0.0.0.0:8080 --workers 4
//! techempower --db :memory: --listen 127.0.0.1:8080   # an in-memory SQLite, filled at start
//! ```
//!
//! Endpoints: `/plaintext`, `/json`, `/db`, `/queries?queries=N`, `/cached-queries?count=N`,
//! `/updates?queries=N`, `/fortunes`. Every flag has a `MORIA_*` environment twin.
//!
//! | module | what lives there |
//! |---|---|
//! | `args` | the command line |
//! | `routes` | the seven handlers and the router |
//! | `world` | the `World` row, the `queries` parameter rule, random ids |
//! | `fortune` | the `Fortune` row and the HTML table |
//! | `store` | the database behind the handlers: SQLite through the ORM, PostgreSQL pipelined |

mod args;
mod fortune;
mod routes;
mod store;
mod world;

use clap::Parser;
use moria_http::{BoxError, Server};
use moria_orm::pg::PoolOptions;
use moria_runtime::shutdown;

use args::Args;
use store::Store;

/// Opens the database, fills it when asked (or when it is `:memory:`) and loads the cache.
/// `None`: `--init` only.
fn prepare(args: &Args, workers: usize) -> Result<Option<routes::App>, BoxError> {
    let store = Store::open(
        &args.db,
        PoolOptions {
            max_size: args.pool_size(workers),
            pipelined: args.pipelined(workers),
            shared_fill: Args::shared_fill(workers),
            ..PoolOptions::default()
        },
    )?;
    if args.init || store.is_memory() {
        store.init()?;
        log::info!("{}: World and Fortune created and filled", args.db);
        if args.init {
            return Ok(None);
        }
    }
    routes::App::new(store).map(Some)
}

fn run(args: Args) -> Result<(), BoxError> {
    let rt = moria_examples::start_runtime(args.workers)?;
    let workers = rt.config().workers;
    // Database work runs in a fiber, like everything the server does later.
    let listen = args.listen.clone();
    let h2 = !args.no_h2;
    let Some(app) = rt
        .run(move || prepare(&args, workers))
        .map_err(|e| format!("start-up fiber failed: {e}"))??
    else {
        return Ok(());
    };
    shutdown::listen_for_signals()?;
    let server = Server::builder()
        .listen(listen.as_str())
        .h2(h2)
        .shutdown_token(shutdown::global().clone())
        .start(routes::router(app))?;
    log::info!(
        "listening on http://{} ({workers} workers)",
        server.local_addr()
    );
    server.wait();
    Ok(())
}

fn main() {
    // Per-request access lines and the engine's fd notes would dominate a benchmark.
    let filter = "info,moria_http::access=warn,may=warn";
    moria_examples::serve_main("techempower", filter, || run(Args::parse()));
}
