//! HTTP/1 internals, laid out by role as hyper's `proto/h1` is: `decode/` (head scanning,
//! request and response head parsing), `encode/` (response and request heads), and
//! `role/server/` (the connection loop, responding, the cached date, the request input).

pub(crate) mod decode;
pub(crate) mod encode;
pub(crate) mod role;
