//! The client role of the HTTP/1.1 codec: response heads parsed with the server's field grammar
//! and the RFC 9112 §6.3 response framing rules (`parse.rs`), request heads encoded (`encode.rs`).
//! Head scanning (`h1/scan.rs`) and chunked decoding (moria-streams) are shared with the server.

pub(crate) mod encode;
pub(crate) mod parse;
