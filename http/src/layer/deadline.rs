//! [`Deadline`]: a time budget for what it wraps. Fibers are not preempted, so a running
//! handler cannot be cut short: the deadline is recorded on the request
//! ([`crate::Request::deadline`]) for code that can honour it (a query timeout, a client call),
//! and an answer that comes after it is replaced by 504, so a client never mistakes a late
//! answer for a timely one.

use std::time::{Duration, Instant};

use crate::app::{HttpError, Layer, Next};
use crate::handler::HandlerResult;
use crate::request::Request;
use crate::response::Response;

/// Answers 504 when what it wraps runs past `limit`.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    limit: Duration,
}

impl Deadline {
    /// A budget of `limit` per request.
    pub fn new(limit: Duration) -> Deadline {
        Deadline { limit }
    }
}

impl Layer for Deadline {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response, next: Next<'_>) -> HandlerResult {
        let due = Instant::now() + self.limit;
        let outer = req.ext.deadline;
        req.ext.touch().deadline = Some(outer.map_or(due, |o| o.min(due)));
        next.run(req, res);
        req.ext.deadline = outer;
        if Instant::now() > due {
            log::warn!(
                "{} {} {}: ran past its {:?} deadline",
                req.peer_addr(),
                req.method_str(),
                req.path(),
                self.limit
            );
            return Err(HttpError::deadline_exceeded().into());
        }
        Ok(())
    }
}
