//! Sockets that wait between messages without a fiber: [`Acceptor::accept_parked`]'s mode.
//! After each message (and its handler) a socket with nothing more buffered goes to a parking
//! lot (moria_runtime::net) with its buffers released; when bytes arrive, or its ping or idle
//! timer is due, a fiber is started to read the next message. An idle socket then costs what
//! its [`WebSocket`] holds, not a fiber's stack (bench/scripts/ws_idle.py; the figures are in
//! http/README.md). The price: while parked the socket belongs to the lot, so only its own
//! handler can send on it (no broadcast from other fibers: use `accept` and `split` for that).
//!
//! [`Acceptor::accept_parked`]: crate::ws::Acceptor::accept_parked

use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, OnceLock};

use moria_runtime::fiber::Builder as FiberBuilder;
use moria_runtime::net::{Parkable, ParkingLot, Wake};

use super::message::Message;
use super::socket::WebSocket;

/// What runs for each message of a parked socket.
pub(crate) type OnMessage = Arc<dyn Fn(&mut WebSocket, Message) + Send + Sync>;

/// A socket waiting in the lot.
pub(crate) struct Parked {
    ws: WebSocket,
    on_message: OnMessage,
    /// The lot's registration flag ([`Parkable::registered`]).
    registered: bool,
}

impl AsRawFd for Parked {
    fn as_raw_fd(&self) -> RawFd {
        self.ws.raw_fd()
    }
}

impl Parkable for Parked {
    fn registered(&mut self) -> &mut bool {
        &mut self.registered
    }
}

/// The one lot every parked WebSocket of the process waits in (made on first use).
fn lot() -> Option<&'static ParkingLot<Parked>> {
    static LOT: OnceLock<Option<ParkingLot<Parked>>> = OnceLock::new();
    LOT.get_or_init(|| match ParkingLot::new(wake) {
        Ok(lot) => Some(lot),
        Err(e) => {
            log::error!("websocket parking lot: {e}; parked sockets keep their fibers");
            None
        }
    })
    .as_ref()
}

/// A parked socket's bytes arrived or its timer is due: a fiber reads on, recorded in the
/// server's tracker as serving the connection (if that fiber dies of a stack overflow, the
/// server reclaims the socket and its slot, as for any connection fiber).
fn wake(p: Parked, why: Wake) {
    if why == Wake::Closed {
        return;
    }
    let attach = p.ws.link().map(|link| link.reg.attacher());
    match FiberBuilder::new().spawn(move || serve(p)) {
        Ok(fiber) => {
            if let Some(attach) = attach {
                attach(fiber);
            }
        }
        Err(e) => log::error!("websocket: cannot start a fiber for a parked socket: {e}"),
    }
}

/// Serves `ws` in parked mode: `on_message` for each message, no fiber between them.
pub(crate) fn serve_parked(ws: WebSocket, on_message: OnMessage) {
    serve(Parked {
        ws,
        on_message,
        registered: false,
    });
}

/// Reads messages and runs the handler until the socket has nothing buffered, then parks it
/// (or until it ends).
fn serve(mut p: Parked) {
    loop {
        let msg = match p.ws.read() {
            Ok(m) => m,
            Err(e) => {
                log::debug!("websocket: {e}");
                return;
            }
        };
        let last = matches!(msg, Message::Close(_));
        (p.on_message)(&mut p.ws, msg);
        if last || p.ws.is_done() {
            return;
        }
        if let Some(deadline) = p.ws.park_ready() {
            match lot() {
                Some(lot) => return lot.park(p, deadline),
                None => continue,
            }
        }
    }
}
