//! [`Session`]: what a TLS stream drives over its memory transport: OpenSSL's session, or after
//! a handoff (`handoff.rs`, when a TLS 1.3 server handshake is done) the lean one of `lean.rs`. Both answer the same non-waiting operations; neither ever touches the socket.

use std::io;

use openssl::error::ErrorStack;
use openssl::ssl::{self, ErrorCode, NameType, ShutdownState, SslRef, SslStream};
use openssl::x509::X509;

use super::engine::Engine;
use super::handoff;
use super::lean::{Facts, Lean};
use super::memio::MemIo;

/// Why an operation on a session returned without finishing.
pub(crate) enum Stop {
    /// It needs bytes from the socket.
    WantRead,
    /// It needs its output sent first.
    WantWrite,
    /// It failed for good.
    Failed(Failure),
}

/// Why an operation failed.
pub(crate) enum Failure {
    /// OpenSSL's verdict (protocol error, alert, unexpected end of stream).
    Ssl(ssl::Error),
    /// The transport failed or timed out, or the lean session refused what it received.
    Io(io::Error),
}

impl Stop {
    /// A failure with `e`.
    pub(crate) fn io(e: io::Error) -> Stop {
        Stop::Failed(Failure::Io(e))
    }

    fn from_ssl(e: ssl::Error) -> Stop {
        match e.code() {
            ErrorCode::WANT_READ => Stop::WantRead,
            ErrorCode::WANT_WRITE => Stop::WantWrite,
            _ => Stop::Failed(Failure::Ssl(e)),
        }
    }
}

/// The session of a stream.
pub(crate) enum Session {
    /// OpenSSL runs it (the handshake, TLS 1.2, clients, and whatever was not handed off).
    OpenSsl(Engine),
    /// Moria protects its records (a TLS 1.3 server session after its handoff).
    Lean(Box<Lean>),
}

impl Session {
    /// OpenSSL's session `ssl`, before its handshake.
    pub(crate) fn new(ssl: SslStream<MemIo>) -> Session {
        Session::OpenSsl(Engine::new(ssl))
    }

    /// The transport buffers.
    pub(crate) fn io(&self) -> &MemIo {
        match self {
            Session::OpenSsl(engine) => engine.get_ref(),
            Session::Lean(lean) => lean.io(),
        }
    }

    /// The transport buffers, mutably.
    pub(crate) fn io_mut(&mut self) -> &mut MemIo {
        match self {
            Session::OpenSsl(engine) => engine.get_mut(),
            Session::Lean(lean) => lean.io_mut(),
        }
    }

    /// OpenSSL's session, while it runs this one.
    pub(crate) fn ssl(&self) -> Option<&SslRef> {
        match self {
            Session::OpenSsl(engine) => Some(engine.ssl()),
            Session::Lean(_) => None,
        }
    }

    /// Empties the thread's OpenSSL error queue before a call on an OpenSSL session: leftovers
    /// from unrelated code on this thread would confuse `SSL_get_error`. The lean session
    /// consults no error queue (the `openssl` crate drains what a failed cipher call leaves).
    pub(crate) fn clear_errors(&self) {
        if let Session::OpenSsl(_) = self {
            drop(ErrorStack::get());
        }
    }

    /// One step of the handshake (done already for a lean session).
    pub(crate) fn handshake(&mut self) -> Result<(), Stop> {
        match self {
            Session::OpenSsl(engine) => engine.do_handshake().map_err(Stop::from_ssl),
            Session::Lean(_) => Ok(()),
        }
    }

    /// Reads application data; `Ok(0)` once the peer sent close_notify.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Result<usize, Stop> {
        match self {
            Session::OpenSsl(engine) => match engine.ssl_read(buf) {
                Err(e) if e.code() == ErrorCode::ZERO_RETURN => Ok(0),
                other => other.map_err(Stop::from_ssl),
            },
            Session::Lean(lean) => lean.read(buf),
        }
    }

    /// Writes up to one record of `buf`.
    pub(crate) fn write(&mut self, buf: &[u8]) -> Result<usize, Stop> {
        match self {
            Session::OpenSsl(engine) => engine.ssl_write(buf).map_err(Stop::from_ssl),
            Session::Lean(lean) => lean.write(buf),
        }
    }

    /// Sends close_notify.
    pub(crate) fn shutdown(&mut self) -> Result<(), Stop> {
        match self {
            Session::OpenSsl(engine) => engine.shutdown().map(drop).map_err(Stop::from_ssl),
            Session::Lean(lean) => lean.shutdown(),
        }
    }

    /// Whether a read can return bytes without touching the transport: decrypted bytes not yet
    /// read, or received bytes not yet decrypted.
    pub(crate) fn has_buffered_input(&self) -> bool {
        let decrypted = match self {
            Session::OpenSsl(engine) => engine.ssl().pending() > 0,
            Session::Lean(lean) => lean.has_plaintext(),
        };
        decrypted || self.io().has_input()
    }

    /// Whether the input ended: the transport's end of stream or the peer's close_notify.
    pub(crate) fn input_ended(&mut self) -> bool {
        self.io().eof()
            || match self {
                Session::OpenSsl(engine) => engine.get_shutdown().contains(ShutdownState::RECEIVED),
                Session::Lean(lean) => lean.input_closed(),
            }
    }

    /// Hands a TLS 1.3 server session over to the lean record layer if it can be (see
    /// `handoff.rs`; only right after the handshake), freeing OpenSSL's `SSL`; otherwise leaves
    /// it as it is.
    pub(crate) fn hand_off(&mut self) {
        if let Session::OpenSsl(engine) = self {
            if let Some((opening, sealing)) = handoff::take(engine) {
                let facts = facts(engine.ssl());
                let io = std::mem::replace(engine.get_mut(), MemIo::new());
                *self = Session::Lean(Box::new(Lean::new(io, opening, sealing, facts)));
            }
        }
    }

    /// For a connection about to sit idle: frees the buffers that hold nothing (and the lean
    /// session's AEAD contexts).
    pub(crate) fn release(&mut self) {
        match self {
            Session::OpenSsl(engine) => engine.get_mut().release(),
            Session::Lean(lean) => lean.release(),
        }
    }

    /// `failure` as an `io::Error`.
    pub(crate) fn io_error(&self, failure: Failure) -> io::Error {
        match failure {
            Failure::Io(e) => e,
            Failure::Ssl(_) if self.io().eof() => io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the TLS peer closed the connection without close_notify",
            ),
            Failure::Ssl(e) => e
                .into_io_error()
                .unwrap_or_else(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string())),
        }
    }

    /// The ALPN protocol both sides agreed on, if any.
    pub(crate) fn alpn_protocol(&self) -> Option<&[u8]> {
        match self {
            Session::OpenSsl(engine) => engine.ssl().selected_alpn_protocol(),
            Session::Lean(lean) => lean.facts().alpn.as_deref(),
        }
    }

    /// The server name (SNI) the client asked for, if any.
    pub(crate) fn server_name(&self) -> Option<&str> {
        match self {
            Session::OpenSsl(engine) => engine.ssl().servername(NameType::HOST_NAME),
            Session::Lean(lean) => lean.facts().server_name.as_deref(),
        }
    }

    /// Whether the handshake resumed an earlier session.
    pub(crate) fn session_reused(&self) -> bool {
        match self {
            Session::OpenSsl(engine) => engine.ssl().session_reused(),
            Session::Lean(lean) => lean.facts().resumed,
        }
    }

    /// The protocol version (`TLSv1.3`).
    pub(crate) fn version(&self) -> &'static str {
        match self {
            Session::OpenSsl(engine) => engine.ssl().version_str(),
            Session::Lean(lean) => lean.facts().version,
        }
    }

    /// The peer's certificate, if it sent one.
    pub(crate) fn peer_certificate(&self) -> Option<X509> {
        match self {
            Session::OpenSsl(engine) => engine.ssl().peer_certificate(),
            Session::Lean(lean) => lean.facts().peer_certificate.clone(),
        }
    }

    /// The cipher suite in use.
    pub(crate) fn cipher(&self) -> Option<&'static str> {
        match self {
            Session::OpenSsl(engine) => engine.ssl().current_cipher().map(|c| c.name()),
            Session::Lean(lean) => lean.facts().cipher,
        }
    }
}

/// What the handshake of `ssl` established.
fn facts(ssl: &SslRef) -> Facts {
    Facts {
        version: ssl.version_str(),
        cipher: ssl.current_cipher().map(|c| c.name()),
        server_name: ssl.servername(NameType::HOST_NAME).map(Box::from),
        alpn: ssl.selected_alpn_protocol().map(Box::from),
        resumed: ssl.session_reused(),
        peer_certificate: ssl.peer_certificate(),
    }
}
