//! HTTPS: the connection loop over moria-crypto's `TlsStream`. The handshake runs in the
//! connection's own fiber, bounded by the acceptor's handshake timeout (moria-crypto's
//! `DEFAULT_HANDSHAKE_TIMEOUT`, 10 s, set with `TlsAcceptorBuilder::handshake_timeout`), so a
//! slow client never stalls the accept loop.

use std::io;
use std::net::Shutdown;
use std::time::Duration;

use moria_crypto::{TlsAcceptor, TlsStream};
use moria_runtime::net::TcpStream;

use crate::tls_info::TlsInfo;
use crate::transport::Transport;

impl Transport for TlsStream<TcpStream> {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self.get_ref(), timeout)
    }

    fn shutdown_write(&mut self) -> io::Result<()> {
        self.shutdown()?;
        self.get_ref().shutdown(Shutdown::Write)
    }

    fn has_buffered_input(&self) -> bool {
        TlsStream::has_buffered_input(self)
    }

    fn read_within(&mut self, buf: &mut [u8], within: Duration) -> io::Result<Option<usize>> {
        TlsStream::read_within(self, buf, within)
    }
}

/// Runs the server handshake on `stream` in the calling fiber.
pub(crate) fn handshake(
    acceptor: &TlsAcceptor,
    stream: TcpStream,
) -> io::Result<TlsStream<TcpStream>> {
    acceptor.accept(stream).map_err(io::Error::from)
}

/// What a handler may learn about the session.
pub(crate) fn info(s: &TlsStream<TcpStream>) -> TlsInfo {
    TlsInfo {
        version: s.version().to_string(),
        cipher: s.cipher().unwrap_or_default().to_string(),
        server_name: s.server_name().map(str::to_string),
        alpn: s.alpn_protocol().map(<[u8]>::to_vec),
        peer_certificate: s.peer_certificate(),
    }
}
