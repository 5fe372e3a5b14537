//! Probes for an orchestrator: [`healthz`] (the process answers: alive) and [`Readiness`]
//! (`/readyz`: 200 while the server is not shutting down and every named check passes, such as
//! "the database answers"; 503 with the reason otherwise, so a load balancer stops sending
//! traffic while the server drains).

use moria_runtime::ShutdownToken;

use crate::handler::{Handler, HandlerResult};
use crate::request::Request;
use crate::response::Response;

/// A readiness check: `Err(reason)` when the dependency is not usable.
type Check = Box<dyn Fn() -> Result<(), String> + Send + Sync>;

/// The liveness probe: always `200 ok`.
pub fn healthz() -> impl Handler {
    |_: &mut Request<'_>, res: &mut Response| -> HandlerResult {
        res.content_type("text/plain").body("ok\n");
        Ok(())
    }
}

/// The readiness probe: 503 while `token` has fired (draining) or while a check fails.
pub struct Readiness {
    token: ShutdownToken,
    checks: Vec<(String, Check)>,
}

impl Readiness {
    /// Ready until `token` fires (the server's shutdown token, or one fired before it).
    pub fn new(token: ShutdownToken) -> Readiness {
        Readiness {
            token,
            checks: Vec::new(),
        }
    }

    /// Adds a check named `name`, run on every probe (keep it cheap: a `SELECT 1`).
    pub fn check(
        mut self,
        name: &str,
        f: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) -> Readiness {
        self.checks.push((name.to_string(), Box::new(f)));
        self
    }
}

impl Handler for Readiness {
    fn handle(&self, _: &mut Request<'_>, res: &mut Response) -> HandlerResult {
        res.content_type("text/plain");
        if self.token.is_triggered() {
            res.status(503).body("draining\n");
            return Ok(());
        }
        for (name, check) in &self.checks {
            if let Err(why) = check() {
                log::warn!("readiness: {name}: {why}");
                res.status(503).body(format!("{name}: not ready\n"));
                return Ok(());
            }
        }
        res.body("ready\n");
        Ok(())
    }
}
