//! The two ends of each tunnelled connection: the accepted socket (TLS terminated here with
//! `--tls-in`) and the connection to the target (direct or through a CONNECT proxy, TLS
//! verified here with `--tls-out`).

use std::path::PathBuf;
use std::time::Duration;

use moria_crypto::{TlsAcceptor, TlsConnector, TlsStream};
use moria_http::client::Client;
use moria_runtime::net::TcpStream;

use super::pipe::{self, Sink, Source};

/// A failure while opening an end.
pub type Failure = Box<dyn std::error::Error + Send + Sync>;

/// How often a waiting copy looks at shutdown (the sockets' read timeout).
pub const POLL: Duration = Duration::from_millis(500);

/// How accepted connections are taken.
pub struct Inbound {
    /// TLS to terminate, if any.
    pub tls: Option<TlsAcceptor>,
}

/// Where and how the tunnel connects.
pub struct Outbound {
    /// The target's host name or address (for TLS, also the name verified).
    pub host: String,
    /// The target's port.
    pub port: u16,
    /// Opens the TCP connection, through the proxy if one is set.
    pub client: Client,
    /// TLS towards the target, if any.
    pub tls: Option<TlsConnector>,
}

/// The TLS server side: a certificate and key from PEM files, or a fresh self-signed one.
pub fn acceptor(
    files: Option<&[PathBuf]>,
    self_signed: bool,
) -> Result<Option<TlsAcceptor>, Failure> {
    Ok(match (files, self_signed) {
        (Some([cert, key]), _) => Some(TlsAcceptor::from_pem_files(cert, key)?),
        (Some(other), _) => return Err(format!("--tls-in takes CERT KEY, got {other:?}").into()),
        (None, true) => Some(TlsAcceptor::self_signed(&["localhost"])?),
        (None, false) => None,
    })
}

/// The TLS client side: system roots plus `cacert`, or no verification at all (`insecure`).
pub fn connector(cacert: Option<&PathBuf>, insecure: bool) -> Result<TlsConnector, Failure> {
    let mut builder = TlsConnector::builder().danger_accept_invalid_certs(insecure);
    if let Some(path) = cacert {
        let pem = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        builder = builder.add_root_certificate_pem(&pem);
    }
    Ok(builder.build()?)
}

/// Splits `HOST:PORT` (`[v6]:PORT` too).
pub fn host_port(spec: &str) -> Result<(String, u16), Failure> {
    let (host, port) = spec
        .rsplit_once(':')
        .ok_or_else(|| format!("--to {spec}: expected HOST:PORT"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = port
        .parse()
        .map_err(|_| format!("--to {spec}: bad port {port}"))?;
    Ok((host.to_owned(), port))
}

impl Inbound {
    /// The accepted socket, after the TLS handshake if any, split.
    pub fn open(&self, sock: TcpStream) -> Result<(Source, Box<dyn Sink>), Failure> {
        match &self.tls {
            None => Ok(pipe::plain(polled(sock)?.split()?)),
            Some(acceptor) => Ok(pipe::tls(polled_tls(acceptor.accept(sock)?)?.split()?)),
        }
    }
}

impl Outbound {
    /// A connection to the target, after the TLS handshake if any, split.
    pub fn open(&self) -> Result<(Source, Box<dyn Sink>), Failure> {
        let sock = self.client.connect_tcp(&self.host, self.port)?;
        match &self.tls {
            None => Ok(pipe::plain(polled(sock)?.split()?)),
            Some(tls) => Ok(pipe::tls(
                polled_tls(tls.connect(&self.host, sock)?)?.split()?,
            )),
        }
    }
}

/// `sock` with the [`POLL`] read timeout (set after any handshake, which has its own limit).
fn polled(sock: TcpStream) -> std::io::Result<TcpStream> {
    sock.set_read_timeout(Some(POLL))?;
    Ok(sock)
}

/// A TLS stream whose socket has the [`POLL`] read timeout.
fn polled_tls(tls: TlsStream<TcpStream>) -> std::io::Result<TlsStream<TcpStream>> {
    tls.get_ref().set_read_timeout(Some(POLL))?;
    Ok(tls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_and_without_brackets() {
        assert_eq!(
            host_port("example.com:443").unwrap(),
            ("example.com".into(), 443)
        );
        assert_eq!(host_port("[::1]:8080").unwrap(), ("::1".into(), 8080));
        assert!(host_port("example.com").is_err());
        assert!(host_port("example.com:http").is_err());
    }
}
