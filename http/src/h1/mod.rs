//! HTTP/1 internals, split by responsibility: head scan and parse, failures, response head
//! encoding, the cached date, body decoding, the connection loop, and the client role.

pub(crate) mod client;
pub(crate) mod conn;
pub(crate) mod date;
pub(crate) mod encode;
pub(crate) mod failure;
pub(crate) mod input;
pub(crate) mod parse;
pub(crate) mod scan;
