//! The layers users reach for first, each a [`crate::Layer`] (plain blocking code), mounted
//! router-wide with [`crate::Router::layer`] or per route with [`crate::Router::with`]:
//!
//! | layer | file | what it does |
//! |---|---|---|
//! | [`RequestId`] | `request_id.rs` | `X-Request-Id` in (when sane) or made up, and out |
//! | [`AccessLog`] | `access.rs` | one line per request: route, status, bytes, duration, id |
//! | [`Cors`] | `cors.rs` | preflight answers, allowed origins/methods/headers, credentials |
//! | [`Compress`] | `compress.rs` | gzip/deflate of the answer (the server's compressor) |
//! | [`BasicAuth`] | `basic_auth.rs` | HTTP Basic; plain or hashed passwords; per-user rights |
//! | [`BearerAuth`] | `bearer.rs` | Bearer JWT through moria-crypto (`JwtKey` or `Jwks`) |
//! | [`RateLimit`] | `rate_limit.rs` | per-client token bucket; 429 + `Retry-After` |
//! | [`Deadline`] | `deadline.rs` | a handler past its deadline answers 504 |
//! | [`SecurityHeaders`] | `security.rs` | nosniff, frame, referrer, HSTS, CSP defaults |

mod access;
mod basic_auth;
mod bearer;
mod compress;
mod cors;
mod deadline;
mod rate_limit;
mod request_id;
mod security;

pub use access::{AccessLog, ROUTE_ACCESS_TARGET};
pub use basic_auth::{read_only, BasicAuth};
pub use bearer::BearerAuth;
pub use compress::Compress;
pub use cors::Cors;
pub use deadline::Deadline;
pub use rate_limit::RateLimit;
pub use request_id::RequestId;
pub use security::SecurityHeaders;
