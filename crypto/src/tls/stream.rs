//! [`TlsStream`]: TLS over any `Read + Write` transport, driven so that no OpenSSL call ever
//! waits (see the crate docs, "OpenSSL in fibers").

use std::fmt;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use openssl::ssl::{Ssl, SslStream};
use openssl::x509::X509VerifyResult;

use moria_runtime::net::TcpStream;

use super::memio::MemIo;
use super::session::Session;
use super::stop::{SessionError, Stop};
use super::timeouts::SocketTimeouts;
use crate::error::{Error, Result};
use crate::x509::Certificate;

/// Largest plaintext handed to OpenSSL per `write` call: one TLS record.
pub const MAX_WRITE_CHUNK: usize = 16 * 1024;

/// A TLS session over the transport `S`; `Read + Write` like the transport itself. Call
/// [`TlsStream::shutdown`] to end it cleanly: dropping it closes without close_notify, which
/// the peer sees as a truncation.
pub struct TlsStream<S> {
    session: Session,
    sock: S,
}

/// Which way the transport is about to be used.
#[derive(Clone, Copy)]
enum SocketOp {
    Read,
    Write,
}

impl<S: Read + Write + SocketTimeouts> TlsStream<S> {
    /// Runs the handshake of `ssl` (already in connect or accept state) over `sock`, giving up
    /// after `timeout`.
    pub(crate) fn handshake(ssl: Ssl, sock: S, timeout: Option<Duration>) -> Result<Self> {
        let mut stream = TlsStream {
            session: Session::new(SslStream::new(ssl, MemIo::new())?),
            sock,
        };
        let outcome = match timeout {
            None => stream.drive(Session::handshake, |_, _| Ok(())),
            Some(limit) => {
                let deadline = Instant::now() + limit;
                let saved = (stream.sock.read_timeout()?, stream.sock.write_timeout()?);
                let outcome = stream.drive(Session::handshake, |sock, op| {
                    arm_timeout(sock, op, deadline, saved)
                });
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

    /// Repeats `op` until it succeeds or fails for good. Each session call runs to completion
    /// on the current thread (the memory transport never waits) and leaves the thread's OpenSSL
    /// error queue drained; only then does the fiber touch the socket, where it may yield.
    fn drive<T>(
        &mut self,
        mut op: impl FnMut(&mut Session) -> Result<T, Stop>,
        mut before_io: impl FnMut(&mut S, SocketOp) -> io::Result<()>,
    ) -> Result<T, SessionError> {
        loop {
            self.session.clear_errors();
            let result = op(&mut self.session);
            let flushed = before_io(&mut self.sock, SocketOp::Write)
                .and_then(|()| self.session.io_mut().flush_to(&mut self.sock));
            match result {
                Ok(value) => {
                    flushed.map_err(SessionError::Io)?;
                    return Ok(value);
                }
                Err(Stop::WantRead) => {
                    flushed.map_err(SessionError::Io)?;
                    before_io(&mut self.sock, SocketOp::Read)
                        .and_then(|()| self.session.io_mut().fill_from(&mut self.sock, &mut []))
                        .map_err(SessionError::Io)?;
                }
                Err(Stop::WantWrite) => flushed.map_err(SessionError::Io)?,
                Err(Stop::Failed(failure)) => return Err(failure),
            }
        }
    }

    fn handshake_error(&self, failure: SessionError, timeout: Option<Duration>) -> Error {
        match failure {
            SessionError::Io(e)
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
            SessionError::Io(e) => Error::Io(e),
            SessionError::Ssl(e) => {
                let verify = self
                    .session
                    .ssl()
                    .map_or(X509VerifyResult::OK, |ssl| ssl.verify_result());
                if verify != X509VerifyResult::OK {
                    Error::CertificateVerification(verify.error_string().to_owned())
                } else if self.session.io().eof() {
                    Error::Handshake("the peer closed the connection during the handshake".into())
                } else {
                    Error::Handshake(e.to_string())
                }
            }
        }
    }

    /// Sends close_notify and flushes it; reads after this return end of stream. The transport
    /// stays open (close or drop it afterwards).
    pub fn shutdown(&mut self) -> io::Result<()> {
        self.drive(Session::shutdown, |_, _| Ok(()))
            .map_err(|failure| self.session.io_error(failure))
    }
}

impl<S> TlsStream<S> {
    /// Whether a read can return bytes without touching the transport: decrypted bytes not yet
    /// read, or received bytes not yet decrypted.
    pub fn has_buffered_input(&self) -> bool {
        self.session.has_buffered_input()
    }

    /// Whether a read can only go on with bytes from the transport: no decrypted bytes wait,
    /// no received ones either, and neither end of stream nor close_notify arrived. Then asking
    /// OpenSSL first would only return `WANT_READ` (a call and an error-queue round per read,
    /// in the keep-alive wait of every request); OpenSSL keeps a partial record itself, which
    /// needs more bytes too.
    fn must_fill_first(&mut self) -> bool {
        !self.has_buffered_input() && !self.session.input_ended()
    }

    /// For a connection about to sit idle: hands a TLS 1.3 server session over to Moria's own
    /// record layer if it is between records (freeing OpenSSL's session), frees Moria's buffers
    /// while they hold nothing (the next read allocates again; OpenSSL frees its own then too,
    /// `SSL_MODE_RELEASE_BUFFERS` is set on every context of this crate), and the TLS 1.3
    /// record layer's AEAD contexts (its keys stay; see the crate README, "TLS 1.3 records after
    /// the handshake").
    pub fn release_buffers(&mut self) {
        self.session.release();
    }

    /// For a connection that will live long (HTTP/2, a split stream): hands a TLS 1.3 server
    /// session whose handshake is over to Moria's record layer, if it can be now.
    pub(crate) fn settle(&mut self) {
        self.session.settle();
    }

    /// Whether Moria's own TLS 1.3 record layer carries the session (a TLS 1.3 server session
    /// after its first idle, see the crate README, "TLS 1.3 records after the handshake").
    pub fn records_by_moria(&self) -> bool {
        matches!(self.session, Session::Moria(_))
    }

    /// The session and the transport, for [`split`](TlsStream::split).
    pub(super) fn into_parts(self) -> (Session, S) {
        (self.session, self.sock)
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
        self.session.alpn_protocol()
    }

    /// The server name (SNI) the client asked for, if any.
    pub fn server_name(&self) -> Option<&str> {
        self.session.server_name()
    }

    /// Whether the handshake resumed an earlier session instead of a full key exchange.
    pub fn session_reused(&self) -> bool {
        self.session.session_reused()
    }

    /// The protocol version in use (`TLSv1.3`).
    pub fn version(&self) -> &'static str {
        self.session.version()
    }

    /// The peer's certificate, if it sent one: on an acceptor with
    /// [`client_auth`](super::TlsAcceptorBuilder::client_auth), the client's verified
    /// certificate; on a connector, the server's.
    pub fn peer_certificate(&self) -> Option<Certificate> {
        self.session.peer_certificate().map(Certificate::from_x509)
    }

    /// The cipher suite in use (`TLS_AES_128_GCM_SHA256`).
    pub fn cipher(&self) -> Option<&'static str> {
        self.session.cipher()
    }
}

impl TlsStream<TcpStream> {
    /// Reads what arrives within about `within`, `Ok(None)` when that time passed first: for
    /// a keep-alive connection waiting for its next request. The wait for the first bytes is
    /// [`TcpStream::read_within`] (no timer, and no look at a socket the last read emptied);
    /// completing a record that arrived in part then waits with the socket's read timeout.
    pub fn read_within(&mut self, buf: &mut [u8], within: Duration) -> io::Result<Option<usize>> {
        if !buf.is_empty()
            && self.must_fill_first()
            && !self
                .session
                .io_mut()
                .fill_within(&mut self.sock, within, buf)?
        {
            return Ok(None);
        }
        self.read(buf).map(Some)
    }
}

impl<S: Read + Write + SocketTimeouts> Read for TlsStream<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !buf.is_empty() && self.must_fill_first() {
            self.session.io_mut().fill_from(&mut self.sock, buf)?;
        }
        self.drive(|s| s.read(buf), |_, _| Ok(()))
            .map_err(|failure| self.session.io_error(failure))
    }
}

impl<S: Read + Write + SocketTimeouts> Write for TlsStream<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let chunk = &buf[..buf.len().min(MAX_WRITE_CHUNK)];
        // One record, sent from OpenSSL's buffer (see `memio.rs`). Only here: a handshake or
        // shutdown writes several records per call, which go out together in one write after
        // it, as a peer that closes early (resetting the connection) would fail a second send.
        // Asked each time, as the transport may have been replaced through `get_mut`.
        self.session.io_mut().send_directly(self.sock.socket_fd());
        let result = self.drive(|s| s.write(chunk), |_, _| Ok(()));
        self.session.io_mut().send_directly(None);
        result.map_err(|failure| self.session.io_error(failure))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.session.io_mut().flush_to(&mut self.sock)?;
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

/// Gives the next transport operation whatever time is left before `deadline`, or the
/// transport's own timeout (`saved`: read, write) if that is shorter.
fn arm_timeout<S: SocketTimeouts>(
    sock: &mut S,
    op: SocketOp,
    deadline: Instant,
    saved: (Option<Duration>, Option<Duration>),
) -> io::Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::ErrorKind::TimedOut.into());
    }
    match op {
        SocketOp::Read => sock.set_read_timeout(Some(saved.0.map_or(left, |t| t.min(left)))),
        SocketOp::Write => sock.set_write_timeout(Some(saved.1.map_or(left, |t| t.min(left)))),
    }
}
