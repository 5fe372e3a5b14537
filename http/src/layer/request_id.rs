//! [`RequestId`]: takes the client's `X-Request-Id` when it is short and plain, otherwise makes
//! one up (a per-process random prefix and a counter: no syscall, no lock), records it on the
//! request (logs print it) and sends it back.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::app::{Layer, Next};
use crate::handler::HandlerResult;
use crate::request::Request;
use crate::response::Response;

/// The header read and written.
pub const REQUEST_ID_HEADER: &str = "X-Request-Id";
/// Longest client-sent id kept (longer ones are replaced).
const MAX_ID_LEN: usize = 128;

/// Gives every request an id, `X-Request-Id` in and out.
pub struct RequestId {
    prefix: u32,
    counter: AtomicU64,
}

impl Default for RequestId {
    fn default() -> Self {
        RequestId::new()
    }
}

impl RequestId {
    /// Ids `xxxxxxxx-n` with a random prefix per layer.
    pub fn new() -> RequestId {
        let mut seed = [0u8; 4];
        // Without randomness the ids are still unique within the process.
        let _ = moria_crypto::random_bytes(&mut seed);
        RequestId {
            prefix: u32::from_le_bytes(seed),
            counter: AtomicU64::new(0),
        }
    }
}

/// A client id worth keeping: 1 to 128 of `A-Z a-z 0-9 - _ . : /`.
fn acceptable(id: &[u8]) -> bool {
    (1..=MAX_ID_LEN).contains(&id.len())
        && id
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-_.:/".contains(c))
}

impl Layer for RequestId {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response, next: Next<'_>) -> HandlerResult {
        match req.header(REQUEST_ID_HEADER).filter(|v| acceptable(v)) {
            Some(id) => {
                let id = std::str::from_utf8(id).unwrap_or_default();
                req.set_request_id(id);
            }
            None => {
                let n = self.counter.fetch_add(1, Ordering::Relaxed);
                let ext = req.extensions_mut();
                ext.set_generated_id(self.prefix, n);
            }
        }
        next.run(req, res);
        if let Some(id) = req.request_id() {
            res.header(REQUEST_ID_HEADER, id);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::acceptable;

    #[test]
    fn only_plain_ids_are_kept() {
        assert!(acceptable(b"abc-123_x.y:z/1"));
        assert!(!acceptable(b""));
        assert!(!acceptable(b"a b"));
        assert!(!acceptable(b"a\"b"));
        assert!(!acceptable(&[b'a'; 129]));
    }
}
