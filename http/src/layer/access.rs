//! [`AccessLog`]: one line per request at `info` on the `log` target [`ROUTE_ACCESS_TARGET`],
//! with route, status, bytes, duration, request id and user. Formatted only when the target
//! is enabled; client text is escaped (`{:?}`). The server-wide combined-format log
//! (`access_log.rs`) has a target of its own, so the two can be switched separately.

use std::time::Instant;

use crate::app::{Layer, Next};
use crate::handler::HandlerResult;
use crate::request::Request;
use crate::response::Response;

/// The `log` target of the layer's lines.
pub const ROUTE_ACCESS_TARGET: &str = "moria_http::route_access";

/// Logs every request it wraps.
#[derive(Debug, Default, Clone, Copy)]
pub struct AccessLog;

impl Layer for AccessLog {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response, next: Next<'_>) -> HandlerResult {
        if !log::log_enabled!(target: ROUTE_ACCESS_TARGET, log::Level::Info) {
            next.run(req, res);
            return Ok(());
        }
        let start = Instant::now();
        next.run(req, res);
        let micros = start.elapsed().as_micros();
        let bytes = res
            .memory_body()
            .map_or_else(|| "-".to_string(), |b| b.len().to_string());
        log::info!(
            target: ROUTE_ACCESS_TARGET,
            "{} {:?} {:?} {} {} {}us id={} user={:?}",
            req.peer_addr().ip(),
            req.method_str(),
            req.path(),
            res.status_code(),
            bytes,
            micros,
            req.request_id().unwrap_or("-"),
            req.user().unwrap_or("-"),
        );
        Ok(())
    }
}
