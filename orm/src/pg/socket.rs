//! The transport under a connection: TCP, Unix socket, or TLS over TCP — all moria-runtime
//! sockets, so every wait parks only the calling fiber.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use moria_crypto::TlsConnector;
use moria_crypto::TlsStream;
use moria_runtime::net::{TcpStream, UnixStream};

use super::config::{Config, Host, SslMode};
use super::error::{Error, Result};

/// Where a connection went, kept for cancel requests (which open a second connection).
#[derive(Clone, Debug)]
pub(crate) enum Peer {
    Tcp(SocketAddr),
    Unix(std::path::PathBuf),
}

pub(crate) enum Socket {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Socket {
    pub(crate) fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.set_read_timeout(t),
            Socket::Unix(s) => s.set_read_timeout(t),
            Socket::Tls(s) => s.get_mut().set_read_timeout(t),
        }
    }

    /// Whether a read would not wait (data, end of stream or error pending).
    pub(crate) fn readable_now(&self) -> io::Result<bool> {
        match self {
            Socket::Tcp(s) => s.readable_now(),
            Socket::Unix(s) => s.readable_now(),
            Socket::Tls(s) => s.get_ref().readable_now(),
        }
    }

    pub(crate) fn is_tls(&self) -> bool {
        matches!(self, Socket::Tls(_))
    }
}

impl Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.read(buf),
            Socket::Unix(s) => s.read(buf),
            Socket::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Socket::Tcp(s) => s.write(buf),
            Socket::Unix(s) => s.write(buf),
            Socket::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Socket::Tcp(s) => s.flush(),
            Socket::Unix(s) => s.flush(),
            Socket::Tls(s) => s.flush(),
        }
    }
}

fn left(deadline: Instant) -> io::Result<Duration> {
    let d = deadline.saturating_duration_since(Instant::now());
    if d.is_zero() {
        Err(io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))
    } else {
        Ok(d)
    }
}

/// Opens the plain socket to the server named by `cfg`.
pub(crate) fn connect_plain(cfg: &Config, deadline: Instant) -> Result<(Socket, Peer)> {
    match &cfg.host {
        Host::Unix(_) => {
            let path = cfg.socket_path().unwrap_or_default();
            let s = UnixStream::connect(&path).map_err(|e| {
                Error::Io(io::Error::new(
                    e.kind(),
                    format!("connecting to {}: {e}", path.display()),
                ))
            })?;
            Ok((Socket::Unix(s), Peer::Unix(path)))
        }
        Host::Tcp(host) => {
            let target = (host.clone(), cfg.port);
            let addrs: Vec<SocketAddr> =
                moria_runtime::blocking_io(move || Ok(target.to_socket_addrs()?.collect()))?;
            let mut last = io::Error::new(
                io::ErrorKind::NotFound,
                format!("{host}: resolved to no address"),
            );
            for a in addrs {
                match TcpStream::connect_timeout(&a, left(deadline)?) {
                    Ok(s) => {
                        s.set_nodelay(true)?;
                        return Ok((Socket::Tcp(s), Peer::Tcp(a)));
                    }
                    Err(e) => last = io::Error::new(e.kind(), format!("connecting to {a}: {e}")),
                }
            }
            Err(Error::Io(last))
        }
    }
}

/// Sends the SSLRequest and, when the server agrees, runs the TLS handshake.
pub(crate) fn negotiate_tls(cfg: &Config, sock: Socket, deadline: Instant) -> Result<Socket> {
    let mode = cfg.effective_sslmode();
    let Socket::Tcp(mut tcp) = sock else {
        if matches!(mode, SslMode::Require | SslMode::VerifyFull) {
            return Err(Error::Tls("TLS over a Unix socket is not supported".into()));
        }
        return Ok(sock);
    };
    if mode == SslMode::Disable {
        return Ok(Socket::Tcp(tcp));
    }
    let mut buf = bytes::BytesMut::new();
    postgres_protocol::message::frontend::ssl_request(&mut buf);
    tcp.set_read_timeout(Some(left(deadline)?))?;
    tcp.write_all(&buf)?;
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer)?;
    match answer[0] {
        b'S' => {}
        b'N' if mode == SslMode::Prefer => return Ok(Socket::Tcp(tcp)),
        b'N' => {
            return Err(Error::Tls(format!(
                "the server refused TLS and sslmode is {}",
                if mode == SslMode::Require {
                    "require"
                } else {
                    "verify-full"
                }
            )))
        }
        other => {
            return Err(Error::protocol(format!(
                "unexpected answer {other:#04x} to the TLS request"
            )))
        }
    }
    let mut b = TlsConnector::builder()
        .handshake_timeout(Some(left(deadline)?))
        .danger_accept_invalid_certs(mode != SslMode::VerifyFull);
    if mode == SslMode::VerifyFull {
        if let Some(path) = &cfg.sslrootcert {
            let pem = std::fs::read(path)
                .map_err(|e| Error::Tls(format!("reading sslrootcert {}: {e}", path.display())))?;
            b = b.add_root_certificate_pem(&pem);
        }
    }
    let connector = b.build().map_err(|e| Error::Tls(e.to_string()))?;
    let host = match &cfg.host {
        Host::Tcp(h) => h.as_str(),
        Host::Unix(_) => "localhost",
    };
    let tls = connector
        .connect(host, tcp)
        .map_err(|e| Error::Tls(e.to_string()))?;
    Ok(Socket::Tls(Box::new(tls)))
}

/// Sends a CancelRequest for backend `pid` over a fresh connection to `peer`.
pub(crate) fn send_cancel(peer: &Peer, pid: i32, secret: i32) -> io::Result<()> {
    let mut buf = bytes::BytesMut::new();
    postgres_protocol::message::frontend::cancel_request(pid, secret, &mut buf);
    match peer {
        Peer::Tcp(a) => {
            let mut s = TcpStream::connect_timeout(a, Duration::from_secs(5))?;
            s.write_all(&buf)?;
            // The server closes the connection when it has read the request.
            s.set_read_timeout(Some(Duration::from_secs(5)))?;
            let _ = s.read(&mut [0u8; 1]);
        }
        Peer::Unix(p) => {
            let mut s = UnixStream::connect(p)?;
            s.write_all(&buf)?;
            s.set_read_timeout(Some(Duration::from_secs(5)))?;
            let _ = s.read(&mut [0u8; 1]);
        }
    }
    Ok(())
}
