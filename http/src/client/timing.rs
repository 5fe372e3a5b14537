//! The timeouts one request runs under: its deadline and the longest single wait, and which
//! of them an expired wait stands for.

use std::time::Duration;

use moria_runtime::Deadline;

use super::error::Phase;

/// The timeouts one request runs under.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// The whole request's deadline, if any.
    pub deadline: Option<Deadline>,
    /// Longest wait for a single read or write.
    pub idle: Duration,
}

impl Timing {
    /// The wait allowed for the next read or write, or which timeout has already expired.
    pub(crate) fn next_wait(&self) -> std::result::Result<Duration, Phase> {
        self.within(self.idle)
    }

    /// `limit`, cut to what is left of the deadline; `Err` once the deadline has passed.
    pub(crate) fn within(&self, limit: Duration) -> std::result::Result<Duration, Phase> {
        let Some(deadline) = self.deadline else {
            return Ok(limit);
        };
        let left = deadline.remaining();
        // The engine counts whole milliseconds and refuses zero.
        if left < Duration::from_millis(1) {
            return Err(Phase::Deadline);
        }
        Ok(left.min(limit))
    }

    /// Which timeout an expired wait stands for.
    pub(crate) fn expired_phase(&self) -> Phase {
        match self.deadline {
            Some(d) if d.remaining() < Duration::from_millis(1) => Phase::Deadline,
            _ => Phase::Read,
        }
    }
}
