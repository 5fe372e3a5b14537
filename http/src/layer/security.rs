//! [`SecurityHeaders`]: the response headers most sites want on every answer, each added only
//! when the handler did not set it: `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY`,
//! `Referrer-Policy: no-referrer`, `Cross-Origin-Opener-Policy: same-origin`, and optionally
//! `Strict-Transport-Security` and `Content-Security-Policy`.

use crate::app::{Layer, Next};
use crate::handler::HandlerResult;
use crate::request::Request;
use crate::response::Response;

/// Adds the security headers to every answer.
#[derive(Debug, Clone)]
pub struct SecurityHeaders {
    headers: Vec<(&'static str, String)>,
}

impl Default for SecurityHeaders {
    fn default() -> Self {
        SecurityHeaders::new()
    }
}

impl SecurityHeaders {
    /// nosniff, `DENY` framing, no referrer, same-origin opener.
    pub fn new() -> SecurityHeaders {
        SecurityHeaders {
            headers: vec![
                ("X-Content-Type-Options", "nosniff".into()),
                ("X-Frame-Options", "DENY".into()),
                ("Referrer-Policy", "no-referrer".into()),
                ("Cross-Origin-Opener-Policy", "same-origin".into()),
            ],
        }
    }

    /// Adds `Strict-Transport-Security: max-age=SECS; includeSubDomains` (send it over HTTPS).
    pub fn hsts(mut self, max_age_secs: u64) -> SecurityHeaders {
        let value = format!("max-age={max_age_secs}; includeSubDomains");
        self.headers.push(("Strict-Transport-Security", value));
        self
    }

    /// Adds `Content-Security-Policy: policy`.
    pub fn content_security_policy(mut self, policy: &str) -> SecurityHeaders {
        self.headers
            .push(("Content-Security-Policy", policy.to_string()));
        self
    }
}

impl Layer for SecurityHeaders {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response, next: Next<'_>) -> HandlerResult {
        next.run(req, res);
        for (name, value) in &self.headers {
            if res.get_header(name).is_none() {
                res.header(name, value);
            }
        }
        Ok(())
    }
}
