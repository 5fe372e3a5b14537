//! What each role does with the codec: the server's connection loop.

pub(crate) mod server;
