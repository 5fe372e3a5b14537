//! Refusing a client at the connection cap: `503 Service Unavailable` with `Retry-After`, then
//! a short linger so the answer is not lost to a reset. Each refusal runs in a fiber of its own
//! (the accept loop never waits on a client), at most [`MAX_REFUSING`] at once; beyond that a
//! refused connection is closed at once.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use moria_crypto::TlsAcceptor;
use moria_runtime::fiber::Builder as FiberBuilder;
use moria_runtime::net::TcpStream;
use moria_runtime::sync::Semaphore;

use super::Shared;
use crate::tls;
use crate::transport::Transport;

/// Refusals answered at once; more are closed without an answer.
pub(super) const MAX_REFUSING: usize = 64;
/// How long a refusal may take to write its answer and linger (plus the TLS handshake, bounded
/// by the acceptor's handshake timeout).
const REFUSE_TIME: Duration = Duration::from_secs(1);
/// At most this much of the refused client's request is read and discarded.
const REFUSE_DRAIN: usize = 64 * 1024;
/// The answer to a client over the cap.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\
Content-Length: 0\r\nConnection: close\r\n\r\n";

/// Answers `stream` with 503 in a fiber of its own (or closes it when too many refusals run).
pub(super) fn refuse(
    stream: TcpStream,
    peer: SocketAddr,
    tls: Option<Arc<TlsAcceptor>>,
    shared: &Arc<Shared>,
) {
    if !shared.refusing.try_acquire() {
        log::debug!("{peer}: over the connection cap, closed without an answer");
        return;
    }
    let s = Arc::clone(shared);
    let spawned = FiberBuilder::new().spawn(move || {
        let _permit = Permit(&s.refusing);
        if let Err(e) = answer(stream, tls.as_deref()) {
            log::debug!("{peer}: refusing at the connection cap: {e}");
        }
    });
    if let Err(e) = spawned {
        shared.refusing.release();
        log::error!("cannot start a fiber to refuse {peer}: {e}");
    }
}

/// Gives a refusal permit back when the refusal ends, however it ends.
struct Permit<'a>(&'a Semaphore);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

fn answer(mut stream: TcpStream, acceptor: Option<&TlsAcceptor>) -> io::Result<()> {
    stream.set_write_timeout(Some(REFUSE_TIME))?;
    match acceptor {
        None => send_and_linger(&mut stream),
        Some(acceptor) => send_and_linger(&mut tls::handshake(acceptor, stream)?),
    }
}

/// Writes the 503, half-closes, and discards what the client still sends (bounded).
fn send_and_linger<T: Transport>(io: &mut T) -> io::Result<()> {
    io.write_all(REFUSED)?;
    io.flush()?;
    io.shutdown_write()?;
    let deadline = Instant::now() + REFUSE_TIME;
    let mut buf = [0u8; 4096];
    let mut seen = 0;
    while seen < REFUSE_DRAIN {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        io.set_read_timeout(Some(left))?;
        match io.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => seen += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
