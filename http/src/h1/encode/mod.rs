//! Head encoding: response heads (server) and request heads (client).

pub(crate) mod request;
pub(crate) mod response;
