//! HTTP/1.1 wire codec, laid out by role as hyper's `proto/h1` is: one codec, two roles.
//!
//! - `decode/`: bytes in, for both roles. `scan.rs` finds where a head ends; `fields.rs` is the
//!   field-line grammar (over `moria_streams::http_grammar`'s tables); `framing.rs` the body
//!   framing of RFC 9112 §6.3 (the fields gathered, rules 3 to 6, [`BodyFraming`]);
//!   `request.rs` and `response.rs` the start lines and the rules only one side has;
//!   `failure.rs` every way a message can break a rule; `body.rs` the body decoder both roles read
//!   through (over moria-streams' `Limited` and `ChunkedReader`).
//! - `encode/`: heads out, for both roles: `response.rs` (server), `request.rs` (client), and
//!   the [`Length`] both declare their framing with.
//! - `role/server/`: the connection loop, the working state's buffers and their pool, the
//!   cached date, the input `BufRead`, and the status each [`Failure`] gets; each parsed head
//!   goes to a `Dispatch` (implemented above the codec, by `crate::dispatch::h1`).
//! - `role/client/`: reading a response head off a connection; the rest of the client (pool,
//!   TLS, redirects) is `crate::client`, which uses only what this file exports.
//!
//! Dependencies point one way: `role` uses `decode` and `encode`, which use neither `role` nor
//! each other; the rest of the crate uses only the items exported here.

mod decode;
mod encode;
mod role;

pub(crate) use decode::HeadBounds;
pub(crate) use decode::{take_head, HeadScan};
pub(crate) use decode::{BodyDecoder, BodyFault, BodyFraming, Head, ResponseHead};
pub use decode::{Failure, Framing, Violation};
pub(crate) use encode::{encode_request, has, is_framing_field, ConnHeader, HeadToSend, Length};
pub(crate) use role::client::{read_response_head, HeadError};
pub(crate) use role::server::{
    current_date, serve, Conn, ConnMemory, ConnPool, Dispatch, Ending, Input, Next, Scratch,
    INIT_READ_BUF, MIN_BODY_ROOM, WRITE_FLUSH_AT,
};
