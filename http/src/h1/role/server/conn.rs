//! The connection loop: read a batch, answer every complete request in it in order
//! (pipelining), write all answers with one write, repeat until no bytes are left, then wait for
//! the next request (up to `park_after`) or hand the connection back to be parked. The working
//! state ([`Conn`]: buffers, parsed head, the dispatcher's scratch) is taken from a pool for each
//! batch of requests and returned as soon as the answers are out, so a waiting or parked
//! connection holds none of it, the busy ones share the few states that are warm in the cache,
//! and nothing is allocated per request on the plain path.
//!
//! The loop knows framing, buffers and time; what a request means is the [`Dispatch`]'s job
//! (implemented by `crate::dispatch::h1`), so this file names no application type.

use std::io;
use std::sync::atomic::{fence, Ordering};
use std::time::{Duration, Instant};

use moria_runtime::ShutdownToken;

use super::buffers::{Conn, Scratch, INIT_READ_BUF};
use super::date::now_secs;
use super::pool::ConnPool;
use crate::h1::decode::{take_head, Failure, HeadBounds};
use crate::limits::Limits;
use crate::tracker::ConnState;
use crate::transport::Transport;

/// What the connection loop asks of the layer above it: the loop owns the socket, the buffers
/// and the framing; the dispatcher turns each parsed head into an answer in the write buffer.
pub(crate) trait Dispatch {
    /// What the dispatcher keeps with each pooled working state.
    type Scratch: Scratch;
    /// The server's protocol limits and timeouts.
    fn limits(&self) -> &Limits;
    /// The connection's entry in the tracker (its idle flag, phase and route).
    fn state(&self) -> &ConnState;
    /// The server's shutdown token.
    fn token(&self) -> &ShutdownToken;
    /// Answers the request whose head `conn.head` holds (`bounds` relative to `conn.start`),
    /// consuming its body, and says whether the connection goes on.
    fn serve<T: Transport>(
        &self,
        conn: &mut Conn<Self::Scratch>,
        io: &mut T,
        bounds: HeadBounds,
    ) -> io::Result<Next>;
    /// The answers so far are about to be written, or never will be (the run ended): what
    /// the dispatcher records per answer is recorded now, before a client can see them.
    fn sending(&self, scratch: &mut Self::Scratch);
    /// Answers a request that broke a rule with its status, then lingers: the connection
    /// closes after it.
    fn refuse<T: Transport>(
        &self,
        conn: &mut Conn<Self::Scratch>,
        io: &mut T,
        f: Failure,
    ) -> io::Result<()>;
}

/// What the loop does after a request.
pub(crate) enum Next {
    /// Read the next request.
    KeepAlive,
    /// Flush and close (after lingering when the client may still be sending).
    Close {
        /// Whether to discard what the client still sends before closing.
        linger: bool,
    },
    /// The answer was a 101: flush it and give the connection up (`Ending::Upgrade`).
    Upgrade,
}

/// How a run of the connection loop ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Every answer is sent and no byte of a next request has arrived: park the connection.
    Idle,
    /// The connection is done (the client left, asked to close, broke the protocol, or the
    /// server shuts down).
    Closed,
    /// The connection switched protocols after a 101: it belongs to the upgrade now, with
    /// these bytes read past the request head.
    Upgrade(Vec<u8>),
}

/// What a connection remembers between runs of the loop (it stays with a parked connection).
#[derive(Default)]
pub(crate) struct ConnMemory {
    /// The read timeout last set on the socket, so it is set again only when it changes.
    read_timeout: Option<Duration>,
    /// Requests answered on the connection so far (saturating).
    answered: u32,
    /// The server's parking-lot flag (`moria_runtime::net::Parkable::registered`), which the
    /// loop never touches: kept here, in the padding after `answered`, a parked connection
    /// stays 168 bytes (a field of its own made it 176).
    pub(crate) in_lot: bool,
    /// Whether the connection came back from the lot after a whole wait in its fiber: it
    /// waits [`CAME_BACK_WAIT`] times longer from then on (in the padding too).
    came_back: bool,
}

/// How many times `park_after` a connection waits in its fiber once it came back from the lot
/// after a whole wait (1.28 s at the default 20 ms). A client whose next request comes a little
/// later than `park_after` (a load generator with 500 connections on a saturated server waits
/// 20–70 ms between answers) would otherwise pay a timer wake-up, an `epoll_ctl`, a fiber end
/// and a fiber start per request: at c500 on a loaded core that was half as much CPU again per
/// request (bench/README.md, "Hello at 500 connections"). The cost: a fiber's stack held that
/// much longer by a client that did come back once; one that goes quiet still parks, at most
/// 1.28 s after its last answer. Doubling the wait per return instead took six returns per
/// connection to settle, longer than a 5-second wrk run with fresh connections.
const CAME_BACK_WAIT: u32 = 64;

/// A connection waits `park_after` in its fiber only once it has been answered this many
/// times: a client that asked twice on one connection tends to ask again soon (a load
/// generator, a page pulling its assets), while one that asked once and went quiet (an API
/// call, a preconnect) parks at once and holds nothing. The first wait costs such a connection
/// one park and one fiber start; measured in bench/README.md ("Benchmarking", memory rows).
const HOT_AFTER: u32 = 2;

/// Room for the first bytes of a request that arrive while the connection waits without its
/// working state (a typical request head fits; the rest is read after them).
const WAIT_BUF: usize = 2 * 1024;
// They are handed to a working state's read buffer, which is never smaller.
const _: () = assert!(WAIT_BUF <= INIT_READ_BUF);

/// Serves requests on `io` until the connection is idle (no byte of a next request arrived
/// within `park_after`) or done. The working state comes from `pool` for each batch of requests
/// and goes back while the connection waits for the next, so the waiting connections of a
/// busy server share the few states that are warm in the cache.
pub(crate) fn serve<T: Transport, D: Dispatch>(
    io: &mut T,
    d: &D,
    pool: &ConnPool<D::Scratch>,
    memory: &mut ConnMemory,
) -> io::Result<Ending> {
    let mut first = [0u8; WAIT_BUF];
    let mut arrived = 0;
    // Answered that often, it parked only after a whole wait: the client came back, only later.
    memory.came_back |= memory.answered >= HOT_AFTER;
    loop {
        let mut conn = pool.take();
        conn.read_timeout = memory.read_timeout;
        conn.answered = memory.answered;
        conn.rbuf[..arrived].copy_from_slice(&first[..arrived]);
        conn.filled = arrived;
        let result = run(&mut conn, io, d, arrived > 0);
        d.sending(&mut conn.app);
        memory.read_timeout = conn.read_timeout;
        memory.answered = conn.answered;
        pool.put(conn);
        match result? {
            Step::End(ending) => return Ok(ending),
            Step::Wait(wait) => {
                let wait = match memory.came_back {
                    true => (wait * CAME_BACK_WAIT).min(d.limits().keep_alive_timeout),
                    false => wait,
                };
                match wait_for_bytes(io, d, wait, &mut first)? {
                    Some(0) => return Ok(Ending::Closed),
                    Some(n) => arrived = n,
                    None => return Ok(Ending::Idle),
                }
            }
        }
    }
}

/// How a run of [`run`] ended.
enum Step {
    /// The connection ends its run.
    End(Ending),
    /// Every answer is out: wait this long for the next request without the working state.
    Wait(Duration),
}

/// Waits up to `wait` for bytes of a next request, reading the first of them into `buf`:
/// `Some(n)` bytes (0: the client closed, or the server shuts down), `None` when the time
/// passed. The wait arms no timer ([`TcpStream::read_within`], over TLS too: it may end up to a
/// few milliseconds after `wait`). The connection counts as idle meanwhile, so a shutdown ends
/// the wait at once.
///
/// [`TcpStream::read_within`]: moria_runtime::net::TcpStream::read_within
fn wait_for_bytes<T: Transport, D: Dispatch>(
    io: &mut T,
    d: &D,
    wait: Duration,
    buf: &mut [u8],
) -> io::Result<Option<usize>> {
    d.state().idle.store(true, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    if d.token().is_triggered() {
        return Ok(Some(0));
    }
    let r = io.read_within(buf, wait);
    d.state().idle.store(false, Ordering::SeqCst);
    r
}

/// One run: serves what arrives (`has_read`: the first bytes are already in `rbuf`); when
/// everything is answered it ends with [`Step::Wait`] for `park_after` (once the connection
/// has been answered [`HOT_AFTER`] times; [`serve`] waits without the working state), or
/// with [`Ending::Idle`] so the connection parks at once: when `park_after` is zero or the
/// connection is not yet hot and has read something. A woken connection's first read finds
/// its bytes there; a fresh one waits for its first request up to `park_after` (here for
/// the whole keep-alive timeout when `park_after` is zero or not shorter).
fn run<T: Transport, D: Dispatch>(
    conn: &mut Conn<D::Scratch>,
    io: &mut T,
    d: &D,
    mut has_read: bool,
) -> io::Result<Step> {
    let limits = d.limits();
    let closed = |r: io::Result<()>| r.map(|()| Step::End(Ending::Closed));
    loop {
        conn.now = now_secs();
        while conn.start < conn.filled {
            let bounds = match take_head(
                &mut conn.scan,
                &conn.rbuf[conn.start..conn.filled],
                limits,
                &mut conn.head,
            ) {
                Ok(Some(b)) => b,
                Ok(None) => break,
                Err(f) => return closed(d.refuse(conn, io, f)),
            };
            conn.head_deadline = None;
            let next = d.serve(conn, io, bounds)?;
            conn.answered = conn.answered.saturating_add(1);
            match next {
                Next::KeepAlive => {}
                Next::Close { linger } => {
                    d.sending(&mut conn.app);
                    conn.flush(io)?;
                    if linger {
                        conn.linger(io, d.state(), d.token());
                    }
                    return Ok(Step::End(Ending::Closed));
                }
                Next::Upgrade => {
                    d.sending(&mut conn.app);
                    conn.flush(io)?;
                    let rest = conn.rbuf[conn.start..conn.filled].to_vec();
                    return Ok(Step::End(Ending::Upgrade(rest)));
                }
            }
        }
        d.sending(&mut conn.app);
        conn.flush(io)?;
        let mut idle = conn.start == conn.filled;
        if idle {
            conn.start = 0;
            conn.filled = 0;
            if d.token().is_triggered() {
                return Ok(Step::End(Ending::Closed));
            }
            if has_read && io.has_buffered_input() {
                // TLS bytes already received: the next head's clock runs.
                idle = false;
            } else if has_read && (limits.park_after.is_zero() || conn.answered < HOT_AFTER) {
                return Ok(Step::End(Ending::Idle));
            }
        }
        // Waiting for a new request: for `park_after` without the working state (then
        // park), or here for the whole keep-alive timeout when a fresh connection is not
        // to park.
        let wait = match idle {
            false => None,
            true if limits.park_after.is_zero() => Some(limits.keep_alive_timeout),
            true if limits.park_after < limits.keep_alive_timeout => {
                return Ok(Step::Wait(limits.park_after));
            }
            true => Some(limits.keep_alive_timeout),
        };
        if let Some(wait) = wait {
            d.state().idle.store(true, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if d.token().is_triggered() {
                return Ok(Step::End(Ending::Closed));
            }
            conn.set_read_timeout(io, wait)?;
        } else {
            let deadline = *conn
                .head_deadline
                .get_or_insert_with(|| Instant::now() + limits.header_timeout);
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return closed(d.refuse(conn, io, Failure::HeaderTimeout));
            }
            conn.set_read_timeout(io, left)?;
            conn.make_room(limits.max_head);
        }
        let r = io.read(&mut conn.rbuf[conn.filled..]);
        if wait.is_some() {
            d.state().idle.store(false, Ordering::SeqCst);
        }
        has_read = true;
        match r {
            Ok(0) => return Ok(Step::End(Ending::Closed)),
            Ok(n) => conn.filled += n,
            Err(e) if is_timeout(&e) => {
                return match wait {
                    Some(_) => Ok(Step::End(Ending::Closed)),
                    None => closed(d.refuse(conn, io, Failure::HeaderTimeout)),
                };
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}
