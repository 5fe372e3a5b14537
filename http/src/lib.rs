//! moria-http: an HTTP/1.1 server (HTTP and HTTPS) written as blocking code on Moria's fibers.
//!
//! Module map:
//! - [`limits`]: every protocol limit and timeout as a named constant with its status code.
//! - [`method`]: [`Method`] and [`Version`].
//! - `h1` (private): head scanner, strict RFC 9112 parser, failure → status mapping.
#![warn(missing_docs)]

mod h1;
pub mod limits;
pub mod method;

pub use limits::Limits;
pub use method::{Method, Version};
