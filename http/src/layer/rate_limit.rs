//! [`RateLimit`]: a token bucket per client address. Each client may burst `burst` requests,
//! refilled at `per_second`; past that the answer is 429 with `Retry-After`. Buckets live in
//! 16 locked shards (held for a few instructions, never across a wait); a shard over
//! [`MAX_CLIENTS_PER_SHARD`] forgets the clients whose buckets are full again.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Instant;

use crate::app::{HttpError, Layer, Next};
use crate::handler::HandlerResult;
use crate::request::Request;
use crate::response::Response;

/// Clients remembered per shard before idle ones are forgotten.
pub const MAX_CLIENTS_PER_SHARD: usize = 4096;
const SHARDS: usize = 16;

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Limits each client address to a request rate.
pub struct RateLimit {
    per_second: f64,
    burst: f64,
    shards: [Mutex<HashMap<IpAddr, Bucket>>; SHARDS],
}

impl RateLimit {
    /// `per_second` requests a second per client, bursts of `burst` (both at least 1).
    pub fn new(per_second: f64, burst: u32) -> RateLimit {
        RateLimit {
            per_second: per_second.max(f64::MIN_POSITIVE),
            burst: f64::from(burst.max(1)),
            shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
        }
    }

    /// Takes a token for `client`; `Err(seconds to wait)` when none is left.
    fn take(&self, client: IpAddr, now: Instant) -> Result<(), u64> {
        let shard = &self.shards[shard_of(client)];
        let mut map = shard.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_CLIENTS_PER_SHARD && !map.contains_key(&client) {
            let (rate, burst) = (self.per_second, self.burst);
            map.retain(|_, b| refill(b, now, rate, burst) < burst);
        }
        let bucket = map.entry(client).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        bucket.tokens = refill(bucket, now, self.per_second, self.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - bucket.tokens) / self.per_second).ceil().max(1.0) as u64)
        }
    }
}

/// The bucket's tokens at `now`.
fn refill(b: &Bucket, now: Instant, rate: f64, burst: f64) -> f64 {
    let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
    (b.tokens + elapsed * rate).min(burst)
}

fn shard_of(ip: IpAddr) -> usize {
    let last = match ip {
        IpAddr::V4(v4) => v4.octets()[3],
        IpAddr::V6(v6) => v6.octets()[15] ^ v6.octets()[7],
    };
    usize::from(last) % SHARDS
}

impl Layer for RateLimit {
    fn handle(&self, req: &mut Request<'_>, res: &mut Response, next: Next<'_>) -> HandlerResult {
        if let Err(wait) = self.take(req.peer_addr().ip(), Instant::now()) {
            return Err(HttpError::too_many_requests(wait).into());
        }
        next.run(req, res);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_bucket_empties_and_refills() {
        let limit = RateLimit::new(2.0, 3);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let other: IpAddr = "10.0.0.2".parse().unwrap();
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(limit.take(ip, t0), Ok(()));
        }
        assert_eq!(limit.take(ip, t0), Err(1));
        assert_eq!(limit.take(other, t0), Ok(()));
        assert_eq!(limit.take(ip, t0 + Duration::from_millis(500)), Ok(()));
        assert_eq!(limit.take(ip, t0 + Duration::from_millis(500)), Err(1));
    }
}
