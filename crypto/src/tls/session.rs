//! [`Session`]: what a TLS stream drives over its memory transport: OpenSSL's session
//! (`openssl_session.rs`), or after a handoff (`handoff.rs`, when a TLS 1.3 server session first
//! goes idle) the one whose records Moria protects (`moria_session.rs`). Both answer the same
//! non-waiting operations; neither ever touches the socket.

use std::io;

use openssl::error::ErrorStack;
use openssl::ssl::{ErrorCode, NameType, ShutdownState, SslRef, SslStream};
use openssl::x509::X509;

use super::handoff;
use super::handshake_outcome::HandshakeOutcome;
use super::memio::MemIo;
use super::moria_session::MoriaSession;
use super::openssl_session::OpenSslSession;
use super::stop::{SessionError, Stop};

/// The session of a stream.
pub(crate) enum Session {
    /// OpenSSL runs it (the handshake, TLS 1.2, clients, and whatever was not handed off).
    OpenSsl(OpenSslSession),
    /// Moria protects its records (a TLS 1.3 server session after its handoff).
    Moria(Box<MoriaSession>),
}

impl Session {
    /// OpenSSL's session `ssl`, before its handshake.
    pub(crate) fn new(ssl: SslStream<MemIo>) -> Session {
        Session::OpenSsl(OpenSslSession::new(ssl))
    }

    /// The transport buffers.
    pub(crate) fn io(&self) -> &MemIo {
        match self {
            Session::OpenSsl(openssl) => openssl.get_ref(),
            Session::Moria(moria) => moria.io(),
        }
    }

    /// The transport buffers, mutably.
    pub(crate) fn io_mut(&mut self) -> &mut MemIo {
        match self {
            Session::OpenSsl(openssl) => openssl.get_mut(),
            Session::Moria(moria) => moria.io_mut(),
        }
    }

    /// OpenSSL's session, while it runs this one.
    pub(crate) fn ssl(&self) -> Option<&SslRef> {
        match self {
            Session::OpenSsl(openssl) => Some(openssl.ssl()),
            Session::Moria(_) => None,
        }
    }

    /// Empties the thread's OpenSSL error queue before a call on an OpenSSL session: leftovers
    /// from unrelated code on this thread would confuse `SSL_get_error`. The Moria session
    /// consults no error queue (the `openssl` crate drains what a failed cipher call leaves).
    pub(crate) fn clear_errors(&self) {
        if let Session::OpenSsl(_) = self {
            drop(ErrorStack::get());
        }
    }

    /// One step of the handshake (done already for a Moria session).
    pub(crate) fn handshake(&mut self) -> Result<(), Stop> {
        match self {
            Session::OpenSsl(openssl) => openssl.do_handshake().map_err(Stop::from_ssl),
            Session::Moria(_) => Ok(()),
        }
    }

    /// Reads application data; `Ok(0)` once the peer sent close_notify.
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Result<usize, Stop> {
        match self {
            Session::OpenSsl(openssl) => match openssl.ssl_read(buf) {
                Err(e) if e.code() == ErrorCode::ZERO_RETURN => Ok(0),
                other => other.map_err(Stop::from_ssl),
            },
            Session::Moria(moria) => moria.read(buf),
        }
    }

    /// Writes up to one record of `buf`.
    pub(crate) fn write(&mut self, buf: &[u8]) -> Result<usize, Stop> {
        match self {
            Session::OpenSsl(openssl) => openssl.ssl_write(buf).map_err(Stop::from_ssl),
            Session::Moria(moria) => moria.write(buf),
        }
    }

    /// Sends close_notify.
    pub(crate) fn shutdown(&mut self) -> Result<(), Stop> {
        match self {
            Session::OpenSsl(openssl) => openssl.shutdown().map(drop).map_err(Stop::from_ssl),
            Session::Moria(moria) => moria.shutdown(),
        }
    }

    /// Whether a read can return bytes without touching the transport: decrypted bytes not yet
    /// read, or received bytes not yet decrypted.
    pub(crate) fn has_buffered_input(&self) -> bool {
        let decrypted = match self {
            Session::OpenSsl(openssl) => openssl.ssl().pending() > 0,
            Session::Moria(moria) => moria.has_plaintext(),
        };
        decrypted || self.io().has_input()
    }

    /// Whether the input ended: the transport's end of stream or the peer's close_notify.
    pub(crate) fn input_ended(&mut self) -> bool {
        self.io().eof()
            || match self {
                Session::OpenSsl(openssl) => {
                    openssl.get_shutdown().contains(ShutdownState::RECEIVED)
                }
                Session::Moria(moria) => moria.input_closed(),
            }
    }

    /// Hands a TLS 1.3 server session over to the record layer Moria runs (`moria_session.rs`)
    /// if it can be now (see `handoff.rs`), freeing OpenSSL's `SSL`; otherwise leaves it as it
    /// is.
    fn hand_off(&mut self) {
        if let Session::OpenSsl(openssl) = self {
            if let Some((opening, sealing)) = handoff::take(openssl) {
                let outcome = HandshakeOutcome::of(openssl.ssl());
                let io = std::mem::replace(openssl.get_mut(), MemIo::new());
                *self = Session::Moria(Box::new(MoriaSession::new(io, opening, sealing, outcome)));
            }
        }
    }

    /// For a connection that will wait or live long (an idle one, a split one, HTTP/2): notes
    /// that it did (see `idle_share.rs`) and hands a TLS 1.3 server session over (see
    /// [`Session::hand_off`]).
    pub(crate) fn settle(&mut self) {
        if let Session::OpenSsl(openssl) = self {
            handoff::going_idle(openssl);
        }
        self.hand_off();
    }

    /// For a connection about to sit idle: [`Session::settle`], then frees the buffers that
    /// hold nothing (and the moria session's AEAD contexts).
    pub(crate) fn release(&mut self) {
        self.settle();
        match self {
            Session::OpenSsl(openssl) => openssl.get_mut().release(),
            Session::Moria(moria) => moria.release(),
        }
    }

    /// `failure` as an `io::Error`.
    pub(crate) fn io_error(&self, failure: SessionError) -> io::Error {
        match failure {
            SessionError::Io(e) => e,
            SessionError::Ssl(_) if self.io().eof() => io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the TLS peer closed the connection without close_notify",
            ),
            SessionError::Ssl(e) => e
                .into_io_error()
                .unwrap_or_else(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string())),
        }
    }

    /// The ALPN protocol both sides agreed on, if any.
    pub(crate) fn alpn_protocol(&self) -> Option<&[u8]> {
        match self {
            Session::OpenSsl(openssl) => openssl.ssl().selected_alpn_protocol(),
            Session::Moria(moria) => moria.outcome().alpn.as_deref(),
        }
    }

    /// The server name (SNI) the client asked for, if any.
    pub(crate) fn server_name(&self) -> Option<&str> {
        match self {
            Session::OpenSsl(openssl) => openssl.ssl().servername(NameType::HOST_NAME),
            Session::Moria(moria) => moria.outcome().server_name.as_deref(),
        }
    }

    /// Whether the handshake resumed an earlier session.
    pub(crate) fn session_reused(&self) -> bool {
        match self {
            Session::OpenSsl(openssl) => openssl.ssl().session_reused(),
            Session::Moria(moria) => moria.outcome().resumed,
        }
    }

    /// The protocol version (`TLSv1.3`).
    pub(crate) fn version(&self) -> &'static str {
        match self {
            Session::OpenSsl(openssl) => openssl.ssl().version_str(),
            Session::Moria(moria) => moria.outcome().version,
        }
    }

    /// The peer's certificate, if it sent one.
    pub(crate) fn peer_certificate(&self) -> Option<X509> {
        match self {
            Session::OpenSsl(openssl) => openssl.ssl().peer_certificate(),
            Session::Moria(moria) => moria.outcome().peer_certificate.clone(),
        }
    }

    /// The cipher suite in use.
    pub(crate) fn cipher(&self) -> Option<&'static str> {
        match self {
            Session::OpenSsl(openssl) => openssl.ssl().current_cipher().map(|c| c.name()),
            Session::Moria(moria) => moria.outcome().cipher,
        }
    }
}
