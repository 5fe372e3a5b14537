//! The crate's error type.

use std::io;
use std::net::SocketAddr;

/// Errors from building or running a server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A listener could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: io::Error,
    },
    /// The server was configured without any address to listen on.
    #[error("no listen address configured")]
    NoListener,
    /// A configuration value that cannot work.
    #[error("invalid configuration: {0}")]
    Config(&'static str),
    /// A fiber could not be started.
    #[error("cannot start a fiber for {what}: {source}")]
    Spawn {
        /// What the fiber was for.
        what: &'static str,
        /// Why.
        source: io::Error,
    },
    /// A bound address could not be read back.
    #[error("listener on {0} has no local address")]
    NoLocalAddr(SocketAddr),
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
