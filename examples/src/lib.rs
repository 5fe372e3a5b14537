//! What the example programs share: logging that never blocks a worker (with the access log
//! split off to its own output), the runtime built from the `MORIA_*` environment and a
//! `--workers` flag, and the separate metrics and health listener.

use std::io;

use moria_http::access_log::{AccessLogger, Sink};
use moria_http::health::{healthz, Readiness};
use moria_http::{metrics, Router, Server};
use moria_runtime::logger::{QueuedLogger, DEFAULT_CAPACITY};
use moria_runtime::{Runtime, ShutdownToken};

/// Installs env_logger (filter from `RUST_LOG`, else `default_filter`) behind moria-runtime's
/// `QueuedLogger`: records are formatted by the caller and written by one thread, so a stderr
/// nobody reads costs dropped lines, never a stalled worker.
pub fn init_logging(default_filter: &str) -> io::Result<()> {
    init_logging_with_access(default_filter, None)
}

/// [`init_logging`], with access-log lines (bare, one per request) written to `access` instead
/// of through env_logger when given.
pub fn init_logging_with_access(default_filter: &str, access: Option<Sink>) -> io::Result<()> {
    let logger =
        env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(default_filter))
            .build();
    let max = logger.filter();
    let (queued, max) = match access {
        None => (QueuedLogger::start(logger, DEFAULT_CAPACITY)?, max),
        // Access lines are `info`: the facade's level must let them through.
        Some(sink) => (
            QueuedLogger::start(AccessLogger::new(logger, sink), DEFAULT_CAPACITY)?,
            max.max(log::LevelFilter::Info),
        ),
    };
    queued.install(max).map_err(io::Error::other)
}

/// Serves `/metrics`, `/healthz` and `/readyz` (with `ready`'s checks) on `addr`, apart from
/// the public port; stops with `token`.
pub fn metrics_listener(
    addr: &str,
    token: ShutdownToken,
    ready: Readiness,
) -> moria_http::Result<Server> {
    Server::builder()
        .listen(addr)
        .shutdown_token(token)
        .metrics(false)
        .start(
            Router::new()
                .get("/metrics", metrics::handler())
                .get("/healthz", healthz())
                .get("/readyz", ready),
        )
}

/// The runtime configured from the `MORIA_*` variables, with `workers` worker threads when
/// given.
pub fn start_runtime(workers: Option<usize>) -> moria_runtime::Result<Runtime> {
    let mut builder = Runtime::builder().from_env()?;
    if let Some(n) = workers {
        builder = builder.workers(n);
    }
    builder.build()
}

/// A benchmark server's `main`: logging at `default_filter` (exits naming `program` if it cannot
/// start), then `run`; an error is logged, the queued logger flushed, and the process exits 1.
pub fn serve_main<E: std::fmt::Display>(
    program: &str,
    default_filter: &str,
    run: impl FnOnce() -> Result<(), E>,
) {
    if let Err(e) = init_logging(default_filter) {
        eprintln!("{program}: {e}");
        std::process::exit(1);
    }
    let result = run();
    if let Err(e) = &result {
        log::error!("{e}");
    }
    // The queued logger writes on its own thread: let it finish before the process ends.
    log::logger().flush();
    if result.is_err() {
        std::process::exit(1);
    }
}
