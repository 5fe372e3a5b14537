//! Opening connections: DNS on the offload pool, TCP with a connect timeout, TLS through
//! moria-crypto; and the connection itself, buffered, with per-read timeouts.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use moria_crypto::{TlsConnector, TlsStream};
use moria_runtime::blocking_io;
use moria_runtime::net::TcpStream;
use moria_streams::transfer::{RawSink, ZeroCopySink};

use super::error::{Error, Phase, Result};
use super::proxy::{tunnel, ProxyServer};
use super::timing::Timing;
use super::url::Url;

/// Read buffer of a connection.
const READ_BUFFER: usize = 16 * 1024;

/// Plain TCP or TLS over it.
pub(crate) enum Transport {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Transport {
    fn tcp(&self) -> &TcpStream {
        match self {
            Transport::Plain(s) => s,
            Transport::Tls(t) => t.get_ref(),
        }
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.read(buf),
            Transport::Tls(t) => t.read(buf),
        }
    }
}

impl ZeroCopySink for Transport {
    /// The socket for `sendfile` on plain TCP; TLS must see the bytes.
    fn raw_sink(&mut self) -> io::Result<Option<&mut dyn RawSink>> {
        match self {
            Transport::Plain(s) => s.raw_sink(),
            Transport::Tls(_) => Ok(None),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.write(buf),
            Transport::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.flush(),
            Transport::Tls(t) => t.flush(),
        }
    }
}

/// An open connection: buffered reads, direct writes.
pub(crate) struct Connection {
    io: BufReader<Transport>,
    /// The socket timeout set last (setting it is a system call: skipped when unchanged).
    armed: Option<Duration>,
}

impl Connection {
    /// Sets the socket's read and write timeouts for the next wait.
    pub(crate) fn arm(&mut self, timing: &Timing) -> io::Result<()> {
        let wait = timing
            .next_wait()
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "request deadline"))?;
        if self.armed == Some(wait) {
            return Ok(());
        }
        let tcp = self.io.get_ref().tcp();
        tcp.set_read_timeout(Some(wait))?;
        tcp.set_write_timeout(Some(wait))?;
        self.armed = Some(wait);
        Ok(())
    }

    /// Whether the idle connection shows signs of having been closed by the server (or of
    /// having unasked-for bytes): either way it cannot carry a request.
    pub(crate) fn looks_closed(&self) -> bool {
        !self.io.buffer().is_empty() || self.io.get_ref().tcp().readable_now().unwrap_or(true)
    }

    /// Whether the TLS handshake resumed an earlier session (`None`: plain TCP).
    pub(crate) fn tls_resumed(&self) -> Option<bool> {
        match self.io.get_ref() {
            Transport::Plain(_) => None,
            Transport::Tls(t) => Some(t.session_reused()),
        }
    }

    /// The transport, for writing.
    pub(crate) fn writer(&mut self) -> &mut Transport {
        self.io.get_mut()
    }
}

impl Read for Connection {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.read(buf)
    }
}

impl BufRead for Connection {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.io.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.io.consume(amt)
    }
}

/// Opens a connection to `url`'s host, or to `proxy` (tunnelling through it with CONNECT for
/// `https`): resolution on the offload pool, each address tried in turn within
/// `connect_timeout`, then TLS for `https` through `tls`.
pub(crate) fn open(
    url: &Url,
    proxy: Option<&ProxyServer>,
    connect_timeout: Duration,
    timing: &Timing,
    tls: &TlsConnector,
) -> Result<Connection> {
    let stream = dial(url, proxy, connect_timeout, timing)?;
    let transport = secure(url, stream, tls)?;
    Ok(Connection {
        io: BufReader::with_capacity(READ_BUFFER, transport),
        armed: None,
    })
}

/// `stream` as it carries `url`: through TLS (verified by `tls`) for `https`, as it is
/// otherwise.
pub(crate) fn secure(url: &Url, stream: TcpStream, tls: &TlsConnector) -> Result<Transport> {
    if !url.is_https() {
        return Ok(Transport::Plain(stream));
    }
    let name = url.to_string();
    let tls = tls.connect(url.host_bare(), stream).map_err(|e| match e {
        moria_crypto::Error::CertificateVerification(reason) => Error::TlsVerify {
            url: name.clone(),
            reason,
        },
        source => Error::Tls { url: name, source },
    })?;
    Ok(Transport::Tls(Box::new(tls)))
}

/// A TCP connection to `url`'s host, or to `proxy`, through which an `https` URL gets a
/// CONNECT tunnel to its host: bytes written go to the origin, not yet encrypted.
pub(crate) fn dial(
    url: &Url,
    proxy: Option<&ProxyServer>,
    connect_timeout: Duration,
    timing: &Timing,
) -> Result<TcpStream> {
    let name = url.to_string();
    let dial = proxy.map_or(url, |p| &p.url);
    let host = dial.host_bare().to_owned();
    let port = dial.port();
    let addrs: Vec<SocketAddr> =
        blocking_io(move || Ok((host.as_str(), port).to_socket_addrs()?.collect())).map_err(
            |source| Error::Dns {
                url: name.clone(),
                source,
            },
        )?;
    let mut last = io::Error::new(io::ErrorKind::NotFound, "the name resolved to no address");
    let mut stream = None;
    for addr in &addrs {
        let wait = match timing.within(connect_timeout) {
            Ok(w) => w,
            Err(phase) => return Err(Error::Timeout { url: name, phase }),
        };
        match TcpStream::connect_timeout(addr, wait) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = e,
        }
    }
    let Some(stream) = stream else {
        if addrs.is_empty() {
            return Err(Error::Dns {
                url: name,
                source: last,
            });
        }
        if last.kind() == io::ErrorKind::TimedOut {
            let phase = match timing.next_wait() {
                Err(phase) => phase,
                Ok(_) => Phase::Connect,
            };
            return Err(Error::Timeout { url: name, phase });
        }
        return Err(Error::Connect {
            url: name,
            source: last,
        });
    };
    let mut stream = stream;
    stream.set_nodelay(true).map_err(|source| Error::Connect {
        url: name.clone(),
        source,
    })?;
    if let (Some(proxy), true) = (proxy, url.is_https()) {
        tunnel(&mut stream, url, proxy, timing)?;
    }
    Ok(stream)
}
