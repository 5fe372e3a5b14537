//! The copy between the two ends of a tunnel: one fiber per direction, each passing end of
//! stream on as a half-close, so the other direction keeps flowing until its own end.

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use moria_crypto::{TlsReader, TlsWriter};
use moria_runtime::net::{TcpReader, TcpWriter};
use moria_runtime::{shutdown, spawn};

/// Bytes moved per read.
const CHUNK: usize = 16 * 1024;

/// The receiving side of one end.
pub type Source = Box<dyn Read + Send>;

/// The sending side of one end, which can end its direction on its own.
pub trait Sink: Write + Send {
    /// Ends this direction (the peer reads end of stream); the other keeps working.
    fn close_write(&mut self) -> io::Result<()>;
}

impl Sink for TcpWriter {
    fn close_write(&mut self) -> io::Result<()> {
        self.shutdown_write()
    }
}

impl Sink for TlsWriter {
    fn close_write(&mut self) -> io::Result<()> {
        self.shutdown()
    }
}

/// A plain TCP end, split.
pub fn plain(halves: (TcpReader, TcpWriter)) -> (Source, Box<dyn Sink>) {
    (Box::new(halves.0), Box::new(halves.1))
}

/// A TLS end, split.
pub fn tls(halves: (TlsReader, TlsWriter)) -> (Source, Box<dyn Sink>) {
    (Box::new(halves.0), Box::new(halves.1))
}

/// Copies both ways between `a` and `b` until both directions have ended: `a`'s bytes to `b`
/// on a new fiber, `b`'s to `a` on this one. A failed direction makes the other give up at
/// its next read timeout, as shutdown does.
pub fn splice(a: (Source, Box<dyn Sink>), b: (Source, Box<dyn Sink>)) -> io::Result<()> {
    let failed = Arc::new(AtomicBool::new(false));
    let ((a_in, a_out), (b_in, b_out)) = (a, b);
    let forward = {
        let failed = failed.clone();
        spawn(move || copy(a_in, b_out, &failed))
    };
    let back = copy(b_in, a_out, &failed);
    let forward = forward
        .join()
        .map_err(|e| io::Error::other(e.to_string()))?;
    back.and(forward)
}

/// Copies `from` to `to` until end of stream, then closes `to`'s direction. A read timeout
/// only checks whether to give up (shutdown, or the other direction failed).
fn copy(mut from: Source, mut to: Box<dyn Sink>, failed: &AtomicBool) -> io::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    let outcome = loop {
        match from.read(&mut buf) {
            Ok(0) => break to.close_write(),
            Ok(n) => {
                if let Err(e) = to.write_all(&buf[..n]).and_then(|()| to.flush()) {
                    break Err(e);
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) =>
            {
                if shutdown::global().is_triggered() || failed.load(Ordering::Relaxed) {
                    break to.close_write();
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Err(e),
        }
    };
    if outcome.is_err() {
        failed.store(true, Ordering::Relaxed);
    }
    outcome
}
