//! [`Error`]: why a WebSocket read, send or handshake failed, and the close code each
//! protocol failure sends to the peer (RFC 6455 §7.4.1).

use std::io;

/// A WebSocket failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The connection failed (including a read or write timeout).
    #[error("websocket i/o: {0}")]
    Io(#[from] io::Error),
    /// The peer broke the protocol (close code 1002).
    #[error("websocket protocol error: {0}")]
    Protocol(&'static str),
    /// A text message (or close reason) that is not UTF-8 (close code 1007).
    #[error("websocket text is not UTF-8")]
    InvalidUtf8,
    /// A frame or message over the configured limit (close code 1009).
    #[error("websocket message over the {0}-byte limit")]
    TooBig(u64),
    /// The close handshake is over (or the connection was closed): nothing more to read or send.
    #[error("websocket closed")]
    Closed,
    /// The handshake failed (client side: the URL, the connection or the server's answer).
    #[error("websocket handshake: {0}")]
    Handshake(String),
}

impl Error {
    /// The close code this failure sends to the peer, if it is the peer's fault.
    pub fn close_code(&self) -> Option<u16> {
        match self {
            Error::Protocol(_) => Some(1002),
            Error::InvalidUtf8 => Some(1007),
            Error::TooBig(_) => Some(1009),
            _ => None,
        }
    }
}

/// A WebSocket result.
pub type Result<T> = std::result::Result<T, Error>;
