//! Accepting: one fiber per listener accepts, takes a connection slot (or refuses the client
//! with 503 at the cap), and starts one fiber per connection, which runs the TLS handshake (if
//! any) and the HTTP loop.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use moria_crypto::TlsAcceptor;
use moria_runtime::fiber::Builder as FiberBuilder;
use moria_runtime::net::{TcpListener, TcpStream};
use moria_runtime::ShutdownToken;

use super::refuse::refuse;
use super::{reclaim_abandoned, Shared};
use crate::h1::conn::{self, ConnCtx};
use crate::server::Counters;
use crate::tls;
use crate::tracker::Registration;

/// Pause after a failed accept (e.g. out of descriptors) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// At the cap, connections abandoned by dead fibers are looked for at most this often.
const RECLAIM_AT_CAP_EVERY: Duration = Duration::from_millis(100);

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
    let mut last_reclaim: Option<Instant> = None;
    loop {
        let (stream, peer) = match listener.accept_until(&shared.token) {
            Ok(Some(a)) => a,
            Ok(None) => return,
            Err(e) => {
                log::warn!("accept failed: {e}");
                moria_runtime::sleep(ACCEPT_BACKOFF);
                continue;
            }
        };
        if !take_slot(&shared, &mut last_reclaim) {
            Counters::bump(&shared.counters.refused);
            refuse(stream, peer, tls.clone(), &shared);
            continue;
        }
        Counters::bump(&shared.counters.accepted);
        let reg = shared.tracker.register(stream.as_raw_fd(), tls.is_some());
        let id = reg.id();
        let conn = Accepted { reg, stream, peer };
        let (s, tls) = (Arc::clone(&shared), tls.clone());
        match FiberBuilder::new().spawn(move || connection(conn, tls.as_deref(), &s)) {
            Ok(fiber) => shared.tracker.attach(id, fiber),
            Err(e) => log::error!("cannot start a connection fiber: {e}"),
        }
    }
}

/// Takes a connection slot; at the cap, first reclaims slots of connections whose fiber died
/// (when a stack overflow happened since the last look, at most every
/// [`RECLAIM_AT_CAP_EVERY`]).
fn take_slot(shared: &Shared, last_reclaim: &mut Option<Instant>) -> bool {
    if shared.tracker.try_acquire_slot() {
        return true;
    }
    if !shared.tracker.may_have_abandoned()
        || last_reclaim.is_some_and(|t| t.elapsed() < RECLAIM_AT_CAP_EVERY)
    {
        return false;
    }
    *last_reclaim = Some(Instant::now());
    reclaim_abandoned(shared) > 0 && shared.tracker.try_acquire_slot()
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
        state: &conn.reg.state,
        token: &shared.token,
        counters: &shared.counters,
    };
    let result = match tls {
        None => conn::serve(&mut conn.stream, &ctx),
        Some(acceptor) => {
            match handshake(
                acceptor,
                &mut conn.stream,
                &conn.reg.state.idle,
                &shared.token,
            ) {
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
