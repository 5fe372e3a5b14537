//! The server role: the connection loop over the shared codec. Beside it: `respond.rs` (a
//! response out: head, body, access log), `pool.rs` (working states kept between connections),
//! `input.rs` (the read side as a `BufRead` for request bodies), `date.rs` (the cached `Date`)
//! and `status.rs` (the one status each decoding failure gets).
//!
//! The connection loop: read a batch, answer every complete request in it in order (pipelining),
//! write all answers with one write, repeat until no bytes are left, then wait for the next
//! request (up to `park_after`) or hand the connection back to be parked. The working state
//! ([`Conn`]: buffers, parsed head, response) is taken from a pool for each batch of requests
//! and returned as soon as the answers are out, so a waiting or parked connection holds none
//! of it, the busy ones share the few states that are warm in the cache, and nothing is
//! allocated per request on the plain path.

use std::io;
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{fence, Ordering};
use std::time::{Duration, Instant};

use moria_runtime::{panic_message, ShutdownToken};

use crate::body::{BodyOutcome, RequestBody};
use crate::compress::Compression;
use crate::h1::decode::{take_head, Failure, Framing, Head, HeadBounds, HeadScan};
use crate::handler::Handler;
use crate::limits::Limits;
use crate::method::{Method, Version};
use crate::percent::decode_path_into;
use crate::request::{Params, Request};
use crate::response::{respond_error, Response};
use crate::server::Counters;
use crate::tls_info::TlsInfo;
use crate::tracker::ConnState;
use crate::transport::Transport;

mod date;
mod input;
mod pool;
mod respond;
mod status;

use date::{now_secs, DateCache};
pub(crate) use input::Input;
pub(crate) use pool::ConnPool;

/// Initial read buffer (grows up to the head limit when a head needs it; nginx starts at 1 KiB).
const INIT_READ_BUF: usize = 4 * 1024;
/// Room kept after a head for reading its body.
const MIN_BODY_ROOM: usize = 4 * 1024;
/// Initial write buffer (grows with the answers batched in it).
const INIT_WRITE_BUF: usize = 4 * 1024;
/// In-memory bodies up to this size are copied into the batched write; larger ones are
/// written straight from where they are.
const INLINE_BODY_MAX: usize = 16 * 1024;
/// Batched responses are flushed once this many bytes are pending.
const WRITE_FLUSH_AT: usize = 64 * 1024;
/// Buffer size between a streamed body and the chunked encoder (one chunk per flush).
const STREAM_BUF: usize = 16 * 1024;
/// Before closing on an error, read and discard what the client still sends for at most this
/// long, so the error response is not lost to a TCP reset.
const LINGER_TIME: Duration = Duration::from_secs(2);
/// ... or at most this many bytes.
const LINGER_BYTES: usize = 256 * 1024;

/// Server-wide settings a connection needs.
pub(crate) struct ConnConfig {
    pub limits: Limits,
    /// The whole `Server: ...\r\n` line, if any.
    pub server_line: Option<Vec<u8>>,
    pub compression: Option<Compression>,
}

/// One connection's context.
pub(crate) struct ConnCtx<'c> {
    pub cfg: &'c ConnConfig,
    pub handler: &'c dyn Handler,
    pub peer: SocketAddr,
    pub tls: Option<&'c TlsInfo>,
    /// What the connection is doing (idle flag for shutdown, phase and route for reclaiming).
    pub state: &'c ConnState,
    pub token: &'c ShutdownToken,
    pub counters: &'c Counters,
}

/// How a run of the connection loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Every answer is sent and no byte of a next request has arrived: park the connection.
    Idle,
    /// The connection is done (the client left, asked to close, broke the protocol, or the
    /// server shuts down).
    Closed,
}

/// Per-connection state that outlives a run of the loop (it stays with a parked connection).
#[derive(Default)]
pub(crate) struct Carry {
    /// The read timeout last set on the socket, so it is set again only when it changes.
    read_timeout: Option<Duration>,
    /// Requests answered on the connection so far (saturating).
    answered: u32,
    /// The server's parking-lot flag (`moria_runtime::net::Parkable::registered`), which the
    /// loop never touches: kept here, in the padding after `answered`, a parked connection
    /// stays 168 bytes (a field of its own made it 176).
    pub(crate) in_lot: bool,
}

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
pub(crate) fn serve<T: Transport>(
    io: &mut T,
    ctx: &ConnCtx<'_>,
    pool: &ConnPool,
    carry: &mut Carry,
) -> io::Result<Ending> {
    let mut first = [0u8; WAIT_BUF];
    let mut arrived = 0;
    loop {
        let mut conn = pool.take();
        conn.read_timeout = carry.read_timeout;
        conn.answered = carry.answered;
        conn.rbuf[..arrived].copy_from_slice(&first[..arrived]);
        conn.filled = arrived;
        let result = conn.run(io, ctx, arrived > 0);
        carry.read_timeout = conn.read_timeout;
        carry.answered = conn.answered;
        pool.put(conn);
        match result? {
            Step::End(ending) => return Ok(ending),
            Step::Wait(wait) => match wait_for_bytes(io, ctx, wait, &mut first)? {
                Some(0) => return Ok(Ending::Closed),
                Some(n) => arrived = n,
                None => return Ok(Ending::Idle),
            },
        }
    }
}

/// How a run of [`Conn::run`] ended.
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
fn wait_for_bytes<T: Transport>(
    io: &mut T,
    ctx: &ConnCtx<'_>,
    wait: Duration,
    buf: &mut [u8],
) -> io::Result<Option<usize>> {
    ctx.state.idle.store(true, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    if ctx.token.is_triggered() {
        return Ok(Some(0));
    }
    let r = io.read_within(buf, wait);
    ctx.state.idle.store(false, Ordering::SeqCst);
    r
}

/// What the loop does after a request.
enum Next {
    KeepAlive,
    Close { linger: bool },
}

/// The working state of a connection while it is served (pooled between runs).
pub(crate) struct Conn {
    rbuf: Vec<u8>,
    start: usize,
    filled: usize,
    wbuf: Vec<u8>,
    scratch: Vec<u8>,
    head: Head,
    scan: HeadScan,
    date: DateCache,
    res: Response,
    params: Params,
    path_buf: String,
    read_timeout: Option<Duration>,
    /// Requests answered on the connection being served (its `Carry` keeps it between runs).
    answered: u32,
    head_deadline: Option<Instant>,
    /// The clock (seconds) for the `Date` of this batch of answers.
    now: u64,
}

impl Conn {
    fn new() -> Conn {
        Conn {
            rbuf: vec![0; INIT_READ_BUF],
            start: 0,
            filled: 0,
            wbuf: Vec::with_capacity(INIT_WRITE_BUF),
            scratch: Vec::new(),
            head: Head::default(),
            scan: HeadScan::default(),
            date: DateCache::default(),
            res: Response::new(),
            params: Params::default(),
            path_buf: String::new(),
            read_timeout: None,
            answered: 0,
            head_deadline: None,
            now: 0,
        }
    }

    /// One run: serves what arrives (`has_read`: the first bytes are already in `rbuf`); when
    /// everything is answered it ends with [`Step::Wait`] for `park_after` (once the connection
    /// has been answered [`HOT_AFTER`] times; [`serve`] waits without the working state), or
    /// with [`Ending::Idle`] so the connection parks at once: when `park_after` is zero or the
    /// connection is not yet hot and has read something. A woken connection's first read finds
    /// its bytes there; a fresh one waits for its first request up to `park_after` (here for
    /// the whole keep-alive timeout when `park_after` is zero or not shorter).
    fn run<T: Transport>(
        &mut self,
        io: &mut T,
        ctx: &ConnCtx<'_>,
        mut has_read: bool,
    ) -> io::Result<Step> {
        let limits = &ctx.cfg.limits;
        loop {
            self.now = now_secs();
            while self.start < self.filled {
                let bounds = match take_head(
                    &mut self.scan,
                    &self.rbuf[self.start..self.filled],
                    limits,
                    &mut self.head,
                ) {
                    Ok(Some(b)) => b,
                    Ok(None) => break,
                    Err(f) => return self.fail(io, ctx, f).map(|()| Step::End(Ending::Closed)),
                };
                self.head_deadline = None;
                let next = self.serve_one(io, ctx, bounds)?;
                self.answered = self.answered.saturating_add(1);
                match next {
                    Next::KeepAlive => {}
                    Next::Close { linger } => {
                        self.flush(io)?;
                        if linger {
                            self.linger(io, ctx);
                        }
                        return Ok(Step::End(Ending::Closed));
                    }
                }
            }
            self.flush(io)?;
            let mut idle = self.start == self.filled;
            if idle {
                self.start = 0;
                self.filled = 0;
                if ctx.token.is_triggered() {
                    return Ok(Step::End(Ending::Closed));
                }
                if has_read && io.has_buffered_input() {
                    // TLS bytes already received: the next head's clock runs.
                    idle = false;
                } else if has_read && (limits.park_after.is_zero() || self.answered < HOT_AFTER) {
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
                ctx.state.idle.store(true, Ordering::SeqCst);
                fence(Ordering::SeqCst);
                if ctx.token.is_triggered() {
                    return Ok(Step::End(Ending::Closed));
                }
                self.set_read_timeout(io, wait)?;
            } else {
                let deadline = *self
                    .head_deadline
                    .get_or_insert_with(|| Instant::now() + limits.header_timeout);
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return self
                        .fail(io, ctx, Failure::HeaderTimeout)
                        .map(|()| Step::End(Ending::Closed));
                }
                self.set_read_timeout(io, left)?;
                self.make_room(limits.max_head);
            }
            let r = io.read(&mut self.rbuf[self.filled..]);
            if wait.is_some() {
                ctx.state.idle.store(false, Ordering::SeqCst);
            }
            has_read = true;
            match r {
                Ok(0) => return Ok(Step::End(Ending::Closed)),
                Ok(n) => self.filled += n,
                Err(e) if is_timeout(&e) => {
                    return match wait {
                        Some(_) => Ok(Step::End(Ending::Closed)),
                        None => self
                            .fail(io, ctx, Failure::HeaderTimeout)
                            .map(|()| Step::End(Ending::Closed)),
                    };
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Moves a partial head to the front and grows the buffer so a head of `max_head` fits.
    fn make_room(&mut self, max_head: usize) {
        if self.start > 0 && self.rbuf.len() - self.filled < MIN_BODY_ROOM {
            self.rbuf.copy_within(self.start..self.filled, 0);
            self.filled -= self.start;
            self.start = 0;
        }
        if self.filled == self.rbuf.len() {
            let want = (self.rbuf.len() * 2)
                .min(max_head + MIN_BODY_ROOM)
                .max(self.filled + 1);
            self.rbuf.resize(want, 0);
        }
    }

    fn set_read_timeout<T: Transport>(&mut self, io: &mut T, d: Duration) -> io::Result<()> {
        if self.read_timeout != Some(d) {
            io.set_read_timeout(Some(d))?;
            self.read_timeout = Some(d);
        }
        Ok(())
    }

    fn flush<T: Transport>(&mut self, io: &mut T) -> io::Result<()> {
        if !self.wbuf.is_empty() {
            io.write_all(&self.wbuf)?;
            self.wbuf.clear();
        }
        Ok(())
    }

    /// Answers a broken request with its status and closes (after lingering).
    fn fail<T: Transport>(&mut self, io: &mut T, ctx: &ConnCtx<'_>, f: Failure) -> io::Result<()> {
        log::debug!("{}: {f} -> {}", ctx.peer, f.status());
        respond_error(&mut self.res, f.status());
        self.write_response(io, ctx, Version::Http11, false, false, None)?;
        self.flush(io)?;
        self.linger(io, ctx);
        Ok(())
    }

    /// Half-closes, then discards what the client still sends (bounded in time and bytes).
    /// The connection counts as idle meanwhile, so a shutdown ends the wait at once.
    fn linger<T: Transport>(&mut self, io: &mut T, ctx: &ConnCtx<'_>) {
        if io.shutdown_write().is_err() {
            return;
        }
        ctx.state.idle.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if ctx.token.is_triggered() {
            return;
        }
        let deadline = Instant::now() + LINGER_TIME;
        let mut seen = 0;
        while seen < LINGER_BYTES {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || io.set_read_timeout(Some(left)).is_err() {
                return;
            }
            match io.read(&mut self.rbuf) {
                Ok(0) | Err(_) => return,
                Ok(n) => seen += n,
            }
        }
    }

    /// `METHOD target` of the request whose head is `rbuf[a..b]` (parsed into `self.head`), for
    /// log lines: whole, where the connection's `ConnState` keeps only its start.
    fn route(&self, a: usize, b: usize) -> String {
        String::from_utf8_lossy(&self.rbuf[a..b][self.head.route()]).into_owned()
    }

    /// Serves the request whose head [`take_head`] parsed into `self.head` (`bounds` are
    /// relative to `self.start`).
    fn serve_one<T: Transport>(
        &mut self,
        io: &mut T,
        ctx: &ConnCtx<'_>,
        bounds: HeadBounds,
    ) -> io::Result<Next> {
        let limits = &ctx.cfg.limits;
        let head_start = self.start;
        let head_end = self.start + bounds.end;
        let decoded = self.head.path_escaped;
        if decoded
            && !decode_path_into(
                self.head.path.get(&self.rbuf[head_start..head_end]),
                &mut self.path_buf,
            )
        {
            self.fail(io, ctx, Failure::BadPath)?;
            return Ok(Next::Close { linger: false });
        }

        let framing = self.head.framing;
        let buffered = self.filled - head_end;
        let body_buffered = match framing {
            Framing::Empty => true,
            Framing::Length(n) => n <= buffered as u64,
            Framing::Chunked => false,
        };
        if !body_buffered || self.head.expect_continue {
            // Earlier answers go out before this request's body is awaited (and before any
            // 100 Continue), keeping order and never leaving a client waiting on us.
            self.flush(io)?;
            self.set_read_timeout(io, limits.body_timeout)?;
            if self.rbuf.len() - head_end < MIN_BODY_ROOM {
                self.rbuf
                    .resize(head_end + MIN_BODY_ROOM.max(INIT_READ_BUF), 0);
            }
        }

        self.res.reset();
        let (head_part, rest) = self.rbuf.split_at_mut(head_end);
        let raw = &head_part[head_start..];
        let raw_path = self.head.path.get(raw);
        let path: &str = if decoded {
            &self.path_buf
        } else if raw_path.is_empty() {
            "/"
        } else {
            std::str::from_utf8(raw_path).unwrap_or("/")
        };
        let input = Input::new(rest, buffered, io);
        let mut req = Request {
            raw,
            head: &self.head,
            path,
            peer: ctx.peer,
            tls: ctx.tls,
            params: &mut self.params,
            body: RequestBody::new(input, framing, self.head.expect_continue, limits.max_body),
        };
        let fresh = self.wbuf.is_empty();
        ctx.state.handling(&raw[self.head.route()], fresh);
        let res = &mut self.res;
        let result = catch_unwind(AssertUnwindSafe(|| ctx.handler.handle(&mut req, res)));
        let (input, outcome) = req.body.finish(limits.max_drain);
        let (pos, end) = input.position();
        self.start = head_end + pos;
        self.filled = head_end + end;

        let mut keep = self.head.keep_alive && !self.res.close;
        let mut linger = false;
        match result {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                log::error!(
                    "{} {}: handler error: {e}",
                    ctx.peer,
                    self.route(head_start, head_end)
                );
                respond_error(&mut self.res, 500);
            }
            Err(payload) => {
                Counters::bump(&ctx.counters.handler_panics);
                log::error!(
                    "{} {}: handler panicked: {}",
                    ctx.peer,
                    self.route(head_start, head_end),
                    panic_message(&*payload)
                );
                respond_error(&mut self.res, 500);
            }
        }
        if let Some(why) = self.res.invalid {
            log::error!(
                "{} {}: invalid response: {why}",
                ctx.peer,
                self.route(head_start, head_end)
            );
            respond_error(&mut self.res, 500);
        }
        match outcome {
            BodyOutcome::Complete => {}
            BodyOutcome::MustClose => {
                keep = false;
                linger = true;
            }
            BodyOutcome::Failed(f) => {
                log::debug!("{}: {f} -> {}", ctx.peer, f.status());
                respond_error(&mut self.res, f.status());
                keep = false;
                linger = true;
            }
        }
        if ctx.token.is_triggered() {
            keep = false;
        }
        let version = self.head.version;
        let is_head = self.head.method == Method::Head;
        ctx.state.responding();
        let keep = self.write_response(
            io,
            ctx,
            version,
            is_head,
            keep,
            Some((head_start, head_end)),
        )?;
        ctx.state.between();
        Ok(match keep {
            true => Next::KeepAlive,
            false => Next::Close {
                linger: linger || self.start < self.filled,
            },
        })
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}
