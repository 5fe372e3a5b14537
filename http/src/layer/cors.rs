//! [`Cors`]: cross-origin resource sharing (Fetch standard). A preflight (`OPTIONS` with
//! `Origin` and `Access-Control-Request-Method`) from an allowed origin is answered here with
//! 204 and the allowed methods and headers; from another origin, or for a method not allowed,
//! with 403. Other requests from an allowed origin go on and get `Access-Control-Allow-Origin`
//! (and credentials, exposed headers) on the way out; requests without `Origin` are untouched.

use crate::app::{HttpError, Layer, Next};
use crate::handler::HandlerResult;
use crate::method::Method;
use crate::request::Request;
use crate::response::Response;

/// The CORS policy.
#[derive(Debug, Clone)]
pub struct Cors {
    any_origin: bool,
    origins: Vec<String>,
    methods: Vec<String>,
    headers: Option<String>,
    expose: Option<String>,
    credentials: bool,
    max_age: Option<u64>,
}

impl Default for Cors {
    fn default() -> Self {
        Cors::new()
    }
}

impl Cors {
    /// No origin allowed yet; methods GET, HEAD, POST; requested headers mirrored.
    pub fn new() -> Cors {
        Cors {
            any_origin: false,
            origins: Vec::new(),
            methods: ["GET", "HEAD", "POST"].map(String::from).to_vec(),
            headers: None,
            expose: None,
            credentials: false,
            max_age: None,
        }
    }

    /// Allows `origin` (`https://app.example`, compared exactly, case-insensitively).
    pub fn allow_origin(mut self, origin: &str) -> Cors {
        self.origins.push(origin.to_string());
        self
    }

    /// Allows every origin (`*`, or the origin itself when credentials are allowed).
    pub fn allow_any_origin(mut self) -> Cors {
        self.any_origin = true;
        self
    }

    /// The methods a cross-origin request may use.
    pub fn allow_methods(mut self, methods: &[&str]) -> Cors {
        self.methods = methods.iter().map(|m| m.to_string()).collect();
        self
    }

    /// The request headers allowed (default: whatever the preflight asks for).
    pub fn allow_headers(mut self, headers: &[&str]) -> Cors {
        self.headers = Some(headers.join(", "));
        self
    }

    /// Response headers scripts may read.
    pub fn expose_headers(mut self, headers: &[&str]) -> Cors {
        self.expose = Some(headers.join(", "));
        self
    }

    /// Allows cookies and HTTP auth on cross-origin requests.
    pub fn allow_credentials(mut self) -> Cors {
        self.credentials = true;
        self
    }

    /// How long a browser may cache a preflight answer.
    pub fn max_age(mut self, secs: u64) -> Cors {
        self.max_age = Some(secs);
        self
    }

    fn allowed(&self, origin: &str) -> bool {
        self.any_origin || self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }

    /// `Access-Control-Allow-Origin` and credentials for an allowed `origin`.
    fn allow_origin_headers(&self, res: &mut Response, origin: &str) {
        if self.any_origin && !self.credentials {
            res.header("Access-Control-Allow-Origin", "*");
        } else {
            res.header("Access-Control-Allow-Origin", origin);
            res.header("Vary", "Origin");
        }
        if self.credentials {
            res.header("Access-Control-Allow-Credentials", "true");
        }
    }

    fn preflight(&self, req: &Request<'_>, res: &mut Response, origin: &str) -> HandlerResult {
        let method = req
            .header_str("access-control-request-method")
            .unwrap_or_default();
        if !self.allowed(origin) {
            return Err(HttpError::forbidden("origin not allowed").into());
        }
        if !self.methods.iter().any(|m| m == method) {
            return Err(HttpError::forbidden(format!("method {method} not allowed")).into());
        }
        res.status(204);
        self.allow_origin_headers(res, origin);
        res.header("Access-Control-Allow-Methods", self.methods.join(", "));
        let requested = req.header("access-control-request-headers");
        match (&self.headers, requested) {
            (Some(h), _) => {
                res.header("Access-Control-Allow-Headers", h);
            }
            (None, Some(h)) => {
                res.header("Access-Control-Allow-Headers", h);
            }
            (None, None) => {}
        }
        if let Some(age) = self.max_age {
            res.header("Access-Control-Max-Age", age.to_string());
        }
        res.header(
            "Vary",
            "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
        );
        Ok(())
    }
}

impl Layer for Cors {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response, next: Next<'_>) -> HandlerResult {
        let Some(origin) = req.header_str("origin") else {
            next.run(req, res);
            return Ok(());
        };
        if req.method() == Method::Options && req.header("access-control-request-method").is_some()
        {
            return self.preflight(req, res, origin);
        }
        next.run(req, res);
        if self.allowed(origin) {
            self.allow_origin_headers(res, origin);
            if let Some(e) = &self.expose {
                res.header("Access-Control-Expose-Headers", e);
            }
        }
        Ok(())
    }
}
