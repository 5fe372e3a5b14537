//! The compare command's own HTTP/1.1 client, for the runs whose request count must be exact
//! (syscall counts) or whose connections must stay open (idle memory): blocking std sockets,
//! TLS through openssl without certificate verification (the bench certificate is
//! self-signed), and a GET whose response is read whole.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use openssl::ssl::{SslConnector, SslMethod, SslMode, SslVerifyMode};

/// How long one read or write may block before the run fails.
const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest response head accepted.
const MAX_HEAD: usize = 16 * 1024;

/// A plain or TLS connection.
pub trait Conn: Read + Write + Send {}
impl<T: Read + Write + Send> Conn for T {}

/// Opens connections to one server, over TLS or not.
pub struct Client {
    tls: Option<SslConnector>,
}

impl Client {
    /// A client for plain HTTP, or for HTTPS with `https` (TLS buffers released while idle, so
    /// that 10,000 open connections fit in the client).
    pub fn new(https: bool) -> Result<Client, String> {
        let tls = if https {
            let mut b = SslConnector::builder(SslMethod::tls_client())
                .map_err(|e| format!("TLS client: {e}"))?;
            b.set_verify(SslVerifyMode::NONE);
            b.set_mode(SslMode::RELEASE_BUFFERS);
            Some(b.build())
        } else {
            None
        };
        Ok(Client { tls })
    }

    /// Connects to `addr` (and completes the TLS handshake).
    pub fn connect(&self, addr: SocketAddr) -> io::Result<Box<dyn Conn>> {
        let tcp = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
        tcp.set_read_timeout(Some(IO_TIMEOUT))?;
        tcp.set_write_timeout(Some(IO_TIMEOUT))?;
        tcp.set_nodelay(true)?;
        let Some(tls) = &self.tls else {
            return Ok(Box::new(tcp));
        };
        let ssl = tls
            .configure()
            .map_err(io::Error::other)?
            .verify_hostname(false)
            .connect("localhost", tcp)
            .map_err(|e| io::Error::other(format!("TLS handshake: {e}")))?;
        Ok(Box::new(ssl))
    }
}

/// Sends `GET path` (with `Connection: close` when `close`) and reads the whole response:
/// `Content-Length` bytes of body, or everything up to EOF when closing. `Err` unless 200.
pub fn get(conn: &mut dyn Conn, path: &str, close: bool) -> io::Result<u64> {
    let connection = if close { "Connection: close\r\n" } else { "" };
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n{connection}\r\n");
    conn.write_all(req.as_bytes())?;
    conn.flush()?;
    let mut buf = Vec::with_capacity(2048);
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::other("response head too long"));
        }
        let n = conn.read(&mut chunk)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]);
    let status = head.split_whitespace().nth(1).unwrap_or("");
    if status != "200" {
        return Err(io::Error::other(format!("answered {status:?}, not 200")));
    }
    let length = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("content-length")
            .then(|| v.trim().parse::<u64>().ok())?
    });
    let mut have = (buf.len() - head_end) as u64;
    match length {
        Some(len) => {
            while have < len {
                let n = conn.read(&mut chunk)?;
                if n == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
                have += n as u64;
            }
        }
        None if close => loop {
            let n = conn.read(&mut chunk)?;
            if n == 0 {
                break;
            }
            have += n as u64;
        },
        None => {
            return Err(io::Error::other(
                "keep-alive response without Content-Length",
            ))
        }
    }
    if close {
        // Wait for the server's close, so that the connection is over when the count is taken.
        while conn.read(&mut chunk)? > 0 {}
    }
    Ok(have)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A canned server side: what the client wrote, and the bytes it will read.
    struct Canned {
        input: io::Cursor<Vec<u8>>,
        written: Vec<u8>,
    }

    impl Read for Canned {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            // One byte at a time: the head scan must cope with any split.
            let n = b.len().min(1);
            self.input.read(&mut b[..n])
        }
    }

    impl Write for Canned {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.written.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn canned(resp: &str) -> Canned {
        Canned {
            input: io::Cursor::new(resp.as_bytes().to_vec()),
            written: Vec::new(),
        }
    }

    #[test]
    fn reads_a_content_length_body() {
        let mut c = canned("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello");
        assert_eq!(get(&mut c, "/f", false).unwrap(), 5);
        let req = String::from_utf8(c.written).unwrap();
        assert!(req.starts_with("GET /f HTTP/1.1\r\n") && !req.contains("close"));
    }

    #[test]
    fn reads_to_eof_when_closing() {
        let mut c = canned("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc");
        assert_eq!(get(&mut c, "/", true).unwrap(), 3);
        assert!(String::from_utf8(c.written)
            .unwrap()
            .contains("Connection: close\r\n"));
    }

    #[test]
    fn refuses_other_statuses_and_short_bodies() {
        let e = get(&mut canned("HTTP/1.1 404 Not Found\r\n\r\n"), "/", false).unwrap_err();
        assert!(e.to_string().contains("404"), "{e}");
        let e = get(
            &mut canned("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nab"),
            "/",
            false,
        )
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    }
}
