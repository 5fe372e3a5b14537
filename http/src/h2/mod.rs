//! HTTP/2 (RFC 9113, HPACK RFC 7541), server side, on fibers: the connection's own fiber reads
//! frames and owns the protocol state; each request stream runs in a fiber of the connection's
//! pool, which sends its response itself, frame by frame, through the shared writer.
//!
//! | file | job |
//! |---|---|
//! | `frame.rs` | frame header codec, types, flags, error codes, padding, the frames the server sends |
//! | `settings.rs` | the server's SETTINGS and limits, the peer's settings checked (§6.5.2) |
//! | `hpack.rs` | header blocks: the decoder bounded by the header list limit; our encoder (static indexes, literals, Huffman when shorter) |
//! | `fields.rs` | a response head as a HEADERS frame, each line's encoding kept per worker thread and reused |
//! | `hpack_decode.rs` | header block decoding: integers, strings, the static and the bounded dynamic table |
//! | `hpack_stories.rs` | (tests) the hpack-test-case stories through our decoder and encoder |
//! | `huffman.rs` | HPACK's Huffman code both ways, from the canonical code's lengths |
//! | `request_head.rs` | a request's fields checked by §8 and rewritten as an HTTP/1.1 head |
//! | `shared.rs` | what the reading fiber and the stream fibers share: windows, inboxes, the writer |
//! | `conn.rs` | the connection: preface, the stream fiber pool, GOAWAY, linger |
//! | `inbound.rs` | each frame the client sends, checked and applied: stream states, flow control, the attacks' bounds |
//! | `reader.rs` | whole frames off the socket, a partial one kept across a timed-out read |
//! | `body.rs` | a stream's request body as a `Read` (a `Transport` for the h1 body reader) |
//! | `send.rs` | a stream's response: HEADERS, then DATA within the windows |
//!
//! Like `h1`, it names no application type: each stream goes to a [`Service`] (implemented by
//! `crate::dispatch::h2`).

mod body;
mod conn;
mod fields;
mod frame;
mod hpack;
mod hpack_decode;
#[cfg(test)]
mod hpack_stories;
mod huffman;
mod inbound;
mod reader;
mod request_head;
mod send;
mod settings;
mod shared;

pub(crate) use body::StreamBody;
pub(crate) use conn::{serve, ConnConfig};
pub(crate) use fields::ResponseHead;
pub(crate) use send::StreamSender;
pub(crate) use shared::Parked;

/// Default cap on a server's streams parked on a zero send window (see
/// [`ServerBuilder::h2_max_parked`](crate::ServerBuilder::h2_max_parked)).
pub(crate) const DEFAULT_MAX_PARKED: usize = 1024;

/// The client connection preface (RFC 9113 §3.4).
pub(crate) const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// One request stream handed to the application side.
pub(crate) struct Call<'c> {
    /// The request as an HTTP/1.1 head (request line, fields, empty line).
    pub head: Vec<u8>,
    /// Whether the request has no body (END_STREAM on its HEADERS).
    pub bodyless: bool,
    /// The body.
    pub body: StreamBody<'c>,
    /// Where the response goes.
    pub send: StreamSender<'c>,
}

/// Serves each request stream of an HTTP/2 connection, in that stream's fiber.
pub(crate) trait Service: Sync {
    /// Answers `call` (its response sent, its stream ended) before returning.
    fn serve(&self, call: Call<'_>);
}
