//! Accepting and serving: one fiber per listener accepts, takes a connection slot (or refuses
//! the client with 503 at the cap), and starts a fiber for the connection, which runs the TLS
//! handshake (if any) and the HTTP loop. When every answer is out and no byte of a next request
//! has arrived (within `park_after`, for a connection answered twice), the connection parks in
//! the server's parking lot (no fiber, no buffers) and its fiber ends; when bytes arrive, the
//! lot starts a new fiber.

use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use moria_crypto::{TlsAcceptor, TlsStream};
use moria_runtime::fiber::Builder as FiberBuilder;
use moria_runtime::net::{Parkable, TcpListener, TcpStream, Wake};
use moria_runtime::{panic_message, ShutdownToken};

use super::refuse::refuse;
use super::{reclaim_abandoned, Shared};
use crate::counters::Counters;
use crate::dispatch::h1::ConnCtx;
use crate::dispatch::h2::H2Service;
use crate::dispatch::Dispatcher;
use crate::h1::{self, ConnMemory, Ending};
use crate::h2;
use crate::metrics::Metered;
use crate::tls;
use crate::tls_info::TlsInfo;
use crate::tracker::Registration;
use crate::upgrade::{OnUpgrade, Upgraded};
use crate::ws;

/// Pause after a failed accept (e.g. out of descriptors) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// How often a plain connection whose first bytes are only the start of the HTTP/2 preface
/// is looked at again.
const PREFACE_POLL: Duration = Duration::from_millis(1);
/// At the cap, connections abandoned by dead fibers are looked for at most this often.
const RECLAIM_AT_CAP_EVERY: Duration = Duration::from_millis(100);

/// An accepted connection; the registration is declared first so it drops (deregisters)
/// before the socket closes.
struct Accepted {
    reg: Registration,
    stream: TcpStream,
    peer: SocketAddr,
}

/// A connection between runs of the HTTP loop: all it keeps while parked (no fiber, no
/// buffers). The registration is declared first so it drops before the socket closes.
pub(super) struct Connection {
    reg: Registration,
    io: Io,
    peer: SocketAddr,
    memory: ConnMemory,
    shared: Arc<Shared>,
}

/// The connection's byte stream; TLS boxed, so a parked plain connection stays small.
enum Io {
    Plain(TcpStream),
    Tls(Box<(TlsStream<TcpStream>, TlsInfo)>),
}

impl AsRawFd for Connection {
    fn as_raw_fd(&self) -> RawFd {
        match &self.io {
            Io::Plain(stream) => stream.as_raw_fd(),
            Io::Tls(tls) => tls.0.get_ref().as_raw_fd(),
        }
    }
}

impl Parkable for Connection {
    fn registered(&mut self) -> &mut bool {
        &mut self.memory.in_lot
    }
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
        match FiberBuilder::new().spawn(move || connection(conn, tls.as_deref(), s)) {
            Ok(fiber) => shared.tracker.attach(id, fiber, 0),
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
fn handshake(
    acceptor: &TlsAcceptor,
    stream: TcpStream,
    idle: &AtomicBool,
    token: &ShutdownToken,
) -> std::io::Result<TlsStream<TcpStream>> {
    idle.store(true, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    if token.is_triggered() {
        return Err(std::io::Error::other("shutting down"));
    }
    let r = tls::handshake(acceptor, stream);
    idle.store(false, Ordering::SeqCst);
    r
}

/// A connection's first fiber: socket options, the TLS handshake (if any), then serving.
fn connection(conn: Accepted, tls: Option<&TlsAcceptor>, shared: Arc<Shared>) {
    let Accepted { reg, stream, peer } = conn;
    if let Err(e) = stream.set_nodelay(true) {
        log::debug!("{peer}: set_nodelay: {e}");
    }
    if let Err(e) = stream.set_write_timeout(Some(shared.cfg.limits.write_timeout)) {
        log::debug!("{peer}: set_write_timeout: {e}");
        return;
    }
    let io = match tls {
        None => Io::Plain(stream),
        // A failed handshake closes the socket before `reg` deregisters it; the window is
        // harmless: only a shutdown or a reclaim touches registered descriptors, and neither
        // acts on a connection whose fiber is still running.
        Some(acceptor) => match handshake(acceptor, stream, &reg.state.idle, &shared.token) {
            Ok(stream) => {
                Counters::bump(&shared.counters.tls_handshakes);
                if stream.records_by_moria() {
                    Counters::bump(&shared.counters.tls_handoffs);
                }
                let info = tls::info(&stream);
                Io::Tls(Box::new((stream, info)))
            }
            Err(e) => {
                shared.counters.tls_failed(&e, shared.token.is_triggered());
                log::debug!("{peer}: TLS handshake failed: {e}");
                return;
            }
        },
    };
    let mut io = io;
    let h2 = shared.h2
        && match &mut io {
            Io::Plain(s) => opens_with_preface(s, &reg.state.idle, &shared),
            Io::Tls(tls) => tls.1.alpn.as_deref() == Some(b"h2"),
        };
    let conn = Connection {
        reg,
        io,
        peer,
        memory: ConnMemory::default(),
        shared,
    };
    if h2 {
        serve_h2(conn);
    } else {
        serve(conn);
    }
}

/// Whether a new plain connection's first bytes are the HTTP/2 preface: one `recv(MSG_PEEK)`
/// per accepted connection (none per request), waiting (as idle, for a shutdown to wake) at
/// most the header timeout; the bytes stay for whichever protocol reads them. Four bytes
/// decide (`PRI ` starts no HTTP/1.1 method the server knows and the h1 parser refuses it).
fn opens_with_preface(s: &mut TcpStream, idle: &AtomicBool, shared: &Shared) -> bool {
    let mut first = [0u8; 4];
    idle.store(true, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    let mut n = 0;
    let limits = &shared.cfg.limits;
    let _ = s.set_read_timeout(Some(limits.header_timeout));
    let deadline = Instant::now() + limits.header_timeout;
    // A preface arriving in pieces, or a peek that found nothing yet: look again (rarely
    // taken: clients send the preface whole, and the peek waits for the first bytes).
    while !shared.token.is_triggered() && Instant::now() < deadline {
        match s.peek(&mut first) {
            Ok(0) => break,
            Ok(k) => n = k,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => n = 0,
            Err(_) => break,
        }
        if n == first.len() || first[..n] != h2::PREFACE[..n] {
            break;
        }
        moria_runtime::sleep(PREFACE_POLL);
    }
    let _ = s.set_read_timeout(None);
    idle.store(false, Ordering::SeqCst);
    n == first.len() && first == h2::PREFACE[..first.len()]
}

/// Serves an HTTP/2 connection in the current fiber until it closes (it never parks: its
/// fiber reads frames while streams run in fibers of their own).
fn serve_h2(conn: Connection) {
    let Connection {
        reg,
        io,
        peer,
        shared,
        ..
    } = conn;
    let fd = match &io {
        Io::Plain(s) => s.as_raw_fd(),
        Io::Tls(tls) => tls.0.get_ref().as_raw_fd(),
    };
    let (stream, info) = match io {
        Io::Plain(s) => (ws::Stream::Tcp(s), None),
        Io::Tls(tls) => {
            let (s, info) = *tls;
            (ws::Stream::Tls(Box::new(s)), Some(info))
        }
    };
    let limits = &shared.cfg.limits;
    let split = stream
        .set_timeouts(Some(limits.keep_alive_timeout), Some(limits.write_timeout))
        .and_then(|()| stream.split());
    let (mut read, write) = match split {
        Ok(halves) => halves,
        Err(e) => {
            log::debug!("{peer}: HTTP/2: {e}");
            return;
        }
    };
    let service = H2Service {
        cfg: &shared.cfg,
        dispatcher: Dispatcher {
            handler: &*shared.handler,
            peer,
            tls: info.as_ref(),
            state: &reg.state,
            counters: &shared.counters,
        },
    };
    let cfg = h2::ConnConfig {
        idle: limits.keep_alive_timeout,
        stall: limits.write_timeout,
        parked: Arc::clone(&shared.h2_parked),
    };
    if let Err(e) = h2::serve(
        &mut read,
        Box::new(write),
        &service,
        &cfg,
        &shared.token,
        &reg.state.idle,
        fd,
    ) {
        log::debug!("{peer}: HTTP/2 connection ended: {e}");
    }
}

/// Serves `conn` in the current fiber (with pooled working states) until it is idle (then it
/// parks and this fiber ends) or done.
fn serve(mut conn: Connection) {
    let shared = Arc::clone(&conn.shared);
    let on_upgrade;
    let ending = {
        let Connection {
            reg,
            io,
            peer,
            memory,
            ..
        } = &mut conn;
        let mut ctx = ConnCtx {
            cfg: &shared.cfg,
            dispatcher: Dispatcher {
                handler: &*shared.handler,
                peer: *peer,
                tls: None,
                state: &reg.state,
                counters: &shared.counters,
            },
            token: &shared.token,
            upgrade: Default::default(),
        };
        let (pool, counters) = (&shared.conns, &shared.counters);
        let ending = match io {
            Io::Plain(s) if shared.cfg.metrics => {
                h1::serve(&mut Metered::new(s, counters), &ctx, pool, memory)
            }
            Io::Plain(s) => h1::serve(s, &ctx, pool, memory),
            Io::Tls(tls) => {
                let (stream, info) = &mut **tls;
                ctx.dispatcher.tls = Some(info);
                if shared.cfg.metrics {
                    h1::serve(&mut Metered::new(stream, counters), &ctx, pool, memory)
                } else {
                    h1::serve(stream, &ctx, pool, memory)
                }
            }
        };
        on_upgrade = ctx.upgrade.take();
        ending
    };
    match ending {
        Ok(Ending::Idle) => {
            if let Io::Tls(tls) = &mut conn.io {
                // A TLS 1.3 session leaves OpenSSL at its first idle (moria-crypto's handoff).
                let before = tls.0.records_by_moria();
                tls.0.release_buffers();
                if !before && tls.0.records_by_moria() {
                    Counters::bump(&conn.shared.counters.tls_handoffs);
                }
            }
            conn.reg.detach();
            let deadline = Instant::now() + shared.cfg.limits.keep_alive_timeout;
            shared.lot.park(conn, Some(deadline));
        }
        Ok(Ending::Closed) => {}
        Ok(Ending::Upgrade(leftover)) => {
            if let Some(f) = on_upgrade {
                upgrade(conn, f, leftover);
            }
        }
        Err(e) => log::debug!("{}: connection ended: {e}", conn.peer),
    }
}

/// Runs what the handler left for the connection after its 101 on a fresh fiber, and lets
/// this one end; a panic there is logged and counted as a handler's.
///
/// A fresh fiber because an upgraded connection usually lives long and mostly waits: in this
/// fiber the handler's frames would sit under the accept and h1 loops' (about 16 KiB of
/// resident stack per idle WebSocket, measured), which a quiet socket cannot give back. The
/// cost is one pooled fiber start per upgrade.
fn upgrade(conn: Connection, f: OnUpgrade, leftover: Vec<u8>) {
    let Connection {
        reg,
        io,
        peer,
        shared,
        ..
    } = conn;
    let stream = match io {
        Io::Plain(s) => ws::Stream::Tcp(s),
        Io::Tls(tls) => ws::Stream::Tls(Box::new(tls.0)),
    };
    // This fiber finishes without the connection ending: the tracker must not take it for
    // one that died; the new one is recorded instead.
    reg.detach();
    let attach = reg.attacher();
    let up = Upgraded {
        link: ws::ServerLink {
            reg,
            token: shared.token.clone(),
        },
        stream,
        leftover,
    };
    let run = move || {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| f(up))) {
            Counters::bump(&shared.counters.handler_panics);
            log::error!(
                "{peer}: upgraded connection's handler panicked: {}",
                panic_message(&*payload)
            );
        }
    };
    // Boxed: the engine keeps a fiber's closure at the top of its stack and copies it into its
    // first frame, so this one (about 200 bytes, the connection's state) would take twice its
    // size of the stack an idle WebSocket keeps for as long as it waits (one page with the
    // box, two without, for `echo --ws`).
    match FiberBuilder::new().spawn(Box::new(run)) {
        Ok(fiber) => attach(fiber),
        Err(e) => log::error!("{peer}: cannot start the upgraded connection's fiber: {e}"),
    }
}

/// The parking lot's wake function: a connection with bytes to read gets a fiber; one whose
/// keep-alive timeout passed, or parked when the server shuts down, closes.
pub(super) fn wake(conn: Connection, why: Wake) {
    if why != Wake::Readable {
        return;
    }
    let (id, epoch) = (conn.reg.id(), conn.reg.epoch());
    let tracker = Arc::clone(&conn.shared.tracker);
    match FiberBuilder::new().spawn(move || serve(conn)) {
        Ok(fiber) => tracker.attach(id, fiber, epoch),
        Err(e) => log::error!("cannot start a connection fiber: {e}"),
    }
}
