//! Decoding: the head scanner, the request-head and response-head parsers, and their failures.

pub(crate) mod failure;
pub(crate) mod request;
pub(crate) mod response;
pub(crate) mod scan;
