//! The hand-off after a `101 Switching Protocols`: what the h1 loop gives up (the connection,
//! the bytes it read past the request head, its place in the tracker) and the function a
//! handler left on its response to take it. Neither the codec nor the application type
//! appears here; `dispatch/ws.rs` and `server/accept.rs` meet through it.

use crate::ws::{ServerLink, Stream};

/// A connection the h1 loop has given up after a 101.
pub(crate) struct Upgraded {
    /// Its entry in the tracker and the server's shutdown token.
    pub(crate) link: ServerLink,
    /// The connection.
    pub(crate) stream: Stream,
    /// Bytes read past the request head (the first frames, if the client did not wait).
    pub(crate) leftover: Vec<u8>,
}

/// What runs on the connection after the 101, in a fiber of its own (`server/accept.rs`).
pub(crate) type OnUpgrade = Box<dyn FnOnce(Upgraded) + Send>;
