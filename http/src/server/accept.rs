//! Accepting: one fiber per listener takes a connection slot, accepts, and starts one fiber per
//! connection, which runs the TLS handshake (if any) and the HTTP loop.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use moria_crypto::TlsAcceptor;
use moria_runtime::fiber::Builder as FiberBuilder;
use moria_runtime::net::{TcpListener, TcpStream};
use moria_runtime::ShutdownToken;

use super::Shared;
use crate::h1::conn::{self, ConnCtx};
use crate::tls;
use crate::tracker::Registration;

/// Pause after a failed accept (e.g. out of descriptors) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// An accepted connection; the registration is declared first so it drops (deregisters)
/// before the socket closes.
struct Accepted {
    reg: Registration,
    stream: TcpStream,
    peer: SocketAddr,
}

pub(super) fn accept_loop(
    mut listener: TcpListener,
    tls: Option<Arc<TlsAcceptor>>,
    shared: Arc<Shared>,
) {
    loop {
        shared.tracker.acquire_slot();
        let accepted = match listener.accept_until(&shared.token) {
            Ok(Some(a)) => a,
            Ok(None) => {
                shared.tracker.release_slot();
                return;
            }
            Err(e) => {
                shared.tracker.release_slot();
                log::warn!("accept failed: {e}");
                moria_runtime::sleep(ACCEPT_BACKOFF);
                continue;
            }
        };
        let (stream, peer) = accepted;
        let reg = shared.tracker.register(stream.as_raw_fd());
        let conn = Accepted { reg, stream, peer };
        let (s, tls) = (Arc::clone(&shared), tls.clone());
        if let Err(e) = FiberBuilder::new().spawn(move || connection(conn, tls.as_deref(), &s)) {
            log::error!("cannot start a connection fiber: {e}");
        }
    }
}

/// The TLS handshake, counted as idle time: a shutdown ends a handshake that is still waiting.
fn handshake<'s>(
    acceptor: &TlsAcceptor,
    stream: &'s mut TcpStream,
    idle: &AtomicBool,
    token: &ShutdownToken,
) -> std::io::Result<moria_crypto::TlsStream<&'s mut TcpStream>> {
    idle.store(true, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    if token.is_triggered() {
        return Err(std::io::Error::other("shutting down"));
    }
    let r = tls::handshake(acceptor, stream);
    idle.store(false, Ordering::SeqCst);
    r
}

fn connection(mut conn: Accepted, tls: Option<&TlsAcceptor>, shared: &Shared) {
    if let Err(e) = conn.stream.set_nodelay(true) {
        log::debug!("{}: set_nodelay: {e}", conn.peer);
    }
    let peer = conn.peer;
    let mut ctx = ConnCtx {
        cfg: &shared.cfg,
        handler: &*shared.handler,
        peer,
        tls: None,
        idle: &conn.reg.idle,
        token: &shared.token,
    };
    let result = match tls {
        None => conn::serve(&mut conn.stream, &ctx),
        Some(acceptor) => {
            match handshake(acceptor, &mut conn.stream, &conn.reg.idle, &shared.token) {
                Ok(mut stream) => {
                    let info = tls::info(&stream);
                    ctx.tls = Some(&info);
                    conn::serve(&mut stream, &ctx)
                }
                Err(e) => Err(e),
            }
        }
    };
    if let Err(e) = result {
        log::debug!("{peer}: connection ended: {e}");
    }
}
