//! [`Stop`]: why an operation on a session (OpenSSL's or Moria's) returned without finishing,
//! and [`SessionError`], how it failed for good. Shared by both sessions and the stream.

use std::io;

use openssl::ssl::{self, ErrorCode};

/// Why an operation on a session returned without finishing.
pub(crate) enum Stop {
    /// It needs bytes from the socket.
    WantRead,
    /// It needs its output sent first.
    WantWrite,
    /// It failed for good.
    Failed(SessionError),
}

/// Why an operation failed.
pub(crate) enum SessionError {
    /// OpenSSL's verdict (protocol error, alert, unexpected end of stream).
    Ssl(ssl::Error),
    /// The transport failed or timed out, or the Moria session refused what it received.
    Io(io::Error),
}

impl Stop {
    /// A failure with `e`.
    pub(crate) fn io(e: io::Error) -> Stop {
        Stop::Failed(SessionError::Io(e))
    }

    /// What OpenSSL's error `e` means for the caller: wait for the socket, or give up.
    pub(crate) fn from_ssl(e: ssl::Error) -> Stop {
        match e.code() {
            ErrorCode::WANT_READ => Stop::WantRead,
            ErrorCode::WANT_WRITE => Stop::WantWrite,
            _ => Stop::Failed(SessionError::Ssl(e)),
        }
    }
}
