//! [`TlsStream`]: TLS over any `Read + Write` transport, driven so that no OpenSSL call ever
//! waits (see the crate docs, "OpenSSL in fibers").

use std::fmt;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use openssl::error::ErrorStack;
use openssl::ssl::{self, ErrorCode, NameType, ShutdownState, Ssl, SslStream};
use openssl::x509::X509VerifyResult;

use super::engine::Engine;
use super::memio::MemIo;
use super::timeouts::SocketTimeouts;
use crate::error::{Error, Result};
use crate::x509::Certificate;

/// Largest plaintext handed to OpenSSL per `write` call: one TLS record.
pub const MAX_WRITE_CHUNK: usize = 16 * 1024;

/// A TLS session over the transport `S`; `Read + Write` like the transport itself. Call
/// [`TlsStream::shutdown`] to end it cleanly: dropping it closes without close_notify, which
/// the peer sees as a truncation.
pub struct TlsStream<S> {
    ssl: Engine,
    sock: S,
}

/// Why one driven OpenSSL operation failed.
enum Failure {
    /// OpenSSL's verdict (protocol error, alert, unexpected end of stream).
    Ssl(ssl::Error),
    /// The transport failed (or timed out) while the fiber was moving bytes.
    Io(io::Error),
}

/// Which way the transport is about to be used.
#[derive(Clone, Copy)]
enum Direction {
    Read,
    Write,
}

impl<S: Read + Write + SocketTimeouts> TlsStream<S> {
    /// Runs the handshake of `ssl` (already in connect or accept state) over `sock`, giving up
    /// after `timeout`.
    pub(crate) fn handshake(ssl: Ssl, sock: S, timeout: Option<Duration>) -> Result<Self> {
        let mut stream = TlsStream {
            ssl: Engine::new(SslStream::new(ssl, MemIo::new())?),
            sock,
        };
        let outcome = match timeout {
            None => stream.drive(|s| s.do_handshake(), |_, _| Ok(())),
            Some(limit) => {
                let deadline = Instant::now() + limit;
                let saved = (stream.sock.read_timeout()?, stream.sock.write_timeout()?);
                let outcome = stream.drive(
                    |s| s.do_handshake(),
                    |sock, dir| arm_timeout(sock, dir, deadline, saved),
                );
                stream.sock.set_read_timeout(saved.0)?;
                stream.sock.set_write_timeout(saved.1)?;
                outcome
            }
        };
        match outcome {
            Ok(()) => Ok(stream),
            Err(failure) => Err(stream.handshake_error(failure, timeout)),
        }
    }

    /// Repeats `op` until it succeeds or fails for good. Each OpenSSL call runs to completion
    /// on the current thread (the memory transport never waits) and leaves the thread's error
    /// queue drained; only then does the fiber touch the socket, where it may yield.
    fn drive<T>(
        &mut self,
        mut op: impl FnMut(&mut SslStream<MemIo>) -> Result<T, ssl::Error>,
        mut before_io: impl FnMut(&mut S, Direction) -> io::Result<()>,
    ) -> Result<T, Failure> {
        loop {
            // Leftovers from unrelated code on this thread would confuse SSL_get_error.
            drop(ErrorStack::get());
            let result = op(&mut self.ssl);
            let flushed = before_io(&mut self.sock, Direction::Write)
                .and_then(|()| self.ssl.get_mut().flush_to(&mut self.sock));
            match result {
                Ok(value) => {
                    flushed.map_err(Failure::Io)?;
                    return Ok(value);
                }
                Err(e) if e.code() == ErrorCode::WANT_READ => {
                    flushed.map_err(Failure::Io)?;
                    before_io(&mut self.sock, Direction::Read)
                        .and_then(|()| self.ssl.get_mut().fill_from(&mut self.sock))
                        .map_err(Failure::Io)?;
                }
                Err(e) if e.code() == ErrorCode::WANT_WRITE => flushed.map_err(Failure::Io)?,
                Err(e) => return Err(Failure::Ssl(e)),
            }
        }
    }

    fn handshake_error(&self, failure: Failure, timeout: Option<Duration>) -> Error {
        match failure {
            Failure::Io(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                let after = timeout.map_or(String::new(), |t| format!(" after {t:?}"));
                Error::Io(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("TLS handshake timed out{after}"),
                ))
            }
            Failure::Io(e) => Error::Io(e),
            Failure::Ssl(e) => {
                let verify = self.ssl.ssl().verify_result();
                if verify != X509VerifyResult::OK {
                    Error::CertificateVerification(verify.error_string().to_owned())
                } else if self.ssl.get_ref().eof() {
                    Error::Handshake("the peer closed the connection during the handshake".into())
                } else {
                    Error::Handshake(e.to_string())
                }
            }
        }
    }

    fn io_error(&self, failure: Failure) -> io::Error {
        match failure {
            Failure::Io(e) => e,
            Failure::Ssl(e) => ssl_io_error(e, self.ssl.get_ref().eof()),
        }
    }

    /// Sends close_notify and flushes it; reads after this return end of stream. The transport
    /// stays open (close or drop it afterwards).
    pub fn shutdown(&mut self) -> io::Result<()> {
        match self.drive(|s| s.shutdown().map(drop), |_, _| Ok(())) {
            Ok(()) => Ok(()),
            Err(failure) => Err(self.io_error(failure)),
        }
    }
}

impl<S> TlsStream<S> {
    /// Whether a read can return bytes without touching the transport: decrypted bytes not yet
    /// read, or received bytes not yet decrypted.
    pub fn has_buffered_input(&self) -> bool {
        self.ssl.ssl().pending() > 0 || self.ssl.get_ref().has_input()
    }

    /// Whether a read can only go on with bytes from the transport: no decrypted bytes wait,
    /// no received ones either, and neither end of stream nor close_notify arrived. Then asking
    /// OpenSSL first would only return `WANT_READ` (a call and an error-queue round per read,
    /// in the keep-alive wait of every request); OpenSSL keeps a partial record itself, which
    /// needs more bytes too.
    fn must_fill_first(&mut self) -> bool {
        !self.has_buffered_input()
            && !self.ssl.get_ref().eof()
            && !self.ssl.get_shutdown().contains(ShutdownState::RECEIVED)
    }

    /// Frees Moria's buffers while they hold nothing (the next read allocates again), for a
    /// connection about to sit idle; OpenSSL frees its own then too (`SSL_MODE_RELEASE_BUFFERS`
    /// is set on every context of this crate).
    pub fn release_buffers(&mut self) {
        self.ssl.get_mut().release();
    }

    /// The session and the transport, for [`split`](TlsStream::split).
    pub(super) fn into_parts(self) -> (Engine, S) {
        (self.ssl, self.sock)
    }

    /// The transport, e.g. to set timeouts after the handshake.
    pub fn get_ref(&self) -> &S {
        &self.sock
    }

    /// The transport, mutably. Reading or writing it directly corrupts the session.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.sock
    }

    /// The ALPN protocol both sides agreed on, if any.
    pub fn alpn_protocol(&self) -> Option<&[u8]> {
        self.ssl.ssl().selected_alpn_protocol()
    }

    /// The server name (SNI) the client asked for, if any.
    pub fn server_name(&self) -> Option<&str> {
        self.ssl.ssl().servername(NameType::HOST_NAME)
    }

    /// Whether the handshake resumed an earlier session instead of a full key exchange.
    pub fn session_reused(&self) -> bool {
        self.ssl.ssl().session_reused()
    }

    /// The protocol version in use (`TLSv1.3`).
    pub fn version(&self) -> &'static str {
        self.ssl.ssl().version_str()
    }

    /// The peer's certificate, if it sent one: on an acceptor with
    /// [`client_auth`](super::TlsAcceptorBuilder::client_auth), the client's verified
    /// certificate; on a connector, the server's.
    pub fn peer_certificate(&self) -> Option<Certificate> {
        self.ssl
            .ssl()
            .peer_certificate()
            .map(Certificate::from_x509)
    }

    /// The cipher suite in use (`TLS_AES_128_GCM_SHA256`).
    pub fn cipher(&self) -> Option<&'static str> {
        self.ssl.ssl().current_cipher().map(|c| c.name())
    }
}

impl<S: Read + Write + SocketTimeouts> Read for TlsStream<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !buf.is_empty() && self.must_fill_first() {
            self.ssl.get_mut().fill_from(&mut self.sock)?;
        }
        let op = |s: &mut SslStream<MemIo>| match s.ssl_read(buf) {
            Err(e) if e.code() == ErrorCode::ZERO_RETURN => Ok(0),
            other => other,
        };
        match self.drive(op, |_, _| Ok(())) {
            Ok(n) => Ok(n),
            Err(failure) => Err(self.io_error(failure)),
        }
    }
}

impl<S: Read + Write + SocketTimeouts> Write for TlsStream<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let chunk = &buf[..buf.len().min(MAX_WRITE_CHUNK)];
        // One record, sent from OpenSSL's buffer (see `memio.rs`). Only here: a handshake or
        // shutdown writes several records per call, which go out together in one write after
        // it, as a peer that closes early (resetting the connection) would fail a second send.
        // Asked each time, as the transport may have been replaced through `get_mut`.
        self.ssl.get_mut().send_directly(self.sock.socket_fd());
        let result = self.drive(|s| s.ssl_write(chunk), |_, _| Ok(()));
        self.ssl.get_mut().send_directly(None);
        match result {
            Ok(n) => Ok(n),
            Err(failure) => Err(self.io_error(failure)),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.ssl.get_mut().flush_to(&mut self.sock)?;
        self.sock.flush()
    }
}

impl<S> fmt::Debug for TlsStream<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsStream")
            .field("version", &self.version())
            .field("cipher", &self.cipher())
            .finish_non_exhaustive()
    }
}

/// OpenSSL's verdict on a read or write as an `io::Error`; `eof`: the transport had ended.
pub(super) fn ssl_io_error(e: ssl::Error, eof: bool) -> io::Error {
    if eof {
        return io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the TLS peer closed the connection without close_notify",
        );
    }
    e.into_io_error()
        .unwrap_or_else(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
}

/// Gives the next transport operation whatever time is left before `deadline`, or the
/// transport's own timeout (`saved`: read, write) if that is shorter.
fn arm_timeout<S: SocketTimeouts>(
    sock: &mut S,
    dir: Direction,
    deadline: Instant,
    saved: (Option<Duration>, Option<Duration>),
) -> io::Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::ErrorKind::TimedOut.into());
    }
    match dir {
        Direction::Read => sock.set_read_timeout(Some(saved.0.map_or(left, |t| t.min(left)))),
        Direction::Write => sock.set_write_timeout(Some(saved.1.map_or(left, |t| t.min(left)))),
    }
}
