//! [`Compress`]: the server's gzip/deflate ([`crate::compress`]) as a layer, so a router or a
//! single route can compress without turning it on server-wide.

use crate::app::{Layer, Next};
use crate::compress::{apply, Compression};
use crate::handler::HandlerResult;
use crate::request::Request;
use crate::response::Response;

/// Compresses the answers it wraps when the client accepts it.
#[derive(Debug, Clone, Default)]
pub struct Compress {
    settings: Compression,
}

impl Compress {
    /// With `settings` (minimum size, level).
    pub fn new(settings: Compression) -> Compress {
        Compress { settings }
    }
}

impl Layer for Compress {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response, next: Next<'_>) -> HandlerResult {
        next.run(req, res);
        let mut scratch = Vec::new();
        apply(
            &self.settings,
            req.header("accept-encoding"),
            res,
            &mut scratch,
        )?;
        Ok(())
    }
}
