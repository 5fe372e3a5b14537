//! The read side's clock and its waits: the ping interval, the idle timeout, the frame
//! timeout (a peer stopped mid-frame), the wait for the peer's close, and the server's shutdown (an idle WebSocket is marked idle in the tracker, so
//! a shutdown wakes it) — all through one read timeout, set only when it changes.

use std::io::{self, Read};
use std::sync::atomic::{fence, Ordering};
use std::time::{Duration, Instant};

use moria_runtime::ShutdownToken;

use super::config::Config;
use super::error::Result;
use super::frame::OpCode;
use super::inbound::Source;
use super::stream::Timed;
use crate::tracker::Registration;

/// What a server-side WebSocket keeps of its server: its entry in the connection tracker
/// (dropped before the socket closes) and the shutdown token.
pub(crate) struct ServerLink {
    pub(crate) reg: Registration,
    pub(crate) token: ShutdownToken,
}

/// Why the read side stopped waiting on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The server shuts down.
    Shutdown,
    /// Nothing arrived within the idle timeout.
    Idle,
    /// The peer did not answer our close in time.
    CloseTimeout,
    /// The peer stopped in the middle of a frame.
    Stalled,
}

/// The read side's timers.
pub(crate) struct Timers {
    ping_interval: Option<Duration>,
    idle_timeout: Option<Duration>,
    close_timeout: Duration,
    frame_timeout: Duration,
    /// See [`Config::quiet_after`].
    quiet_after: Duration,
    last_heard: Instant,
    last_ping: Instant,
    /// Set once our close is out: the peer must answer by then.
    close_deadline: Option<Instant>,
    /// The read timeout last set on the socket.
    timeout_set: Option<Duration>,
    /// Why the last wait ended on its own.
    pub(crate) stop: Option<Stop>,
}

impl Timers {
    /// The timers `cfg` asks for, starting now.
    pub(crate) fn new(cfg: &Config) -> Timers {
        let now = Instant::now();
        Timers {
            ping_interval: cfg.ping_interval,
            idle_timeout: cfg.idle_timeout,
            close_timeout: cfg.close_timeout,
            frame_timeout: cfg.frame_timeout,
            quiet_after: cfg.quiet_after,
            last_heard: now,
            last_ping: now,
            close_deadline: None,
            timeout_set: None,
            stop: None,
        }
    }

    /// Our close frame went out: the peer's answer is awaited for the close timeout.
    pub(crate) fn close_sent(&mut self) {
        self.close_deadline
            .get_or_insert_with(|| Instant::now() + self.close_timeout);
    }

    /// When a socket waiting between messages must wake (its ping or idle timer), if ever.
    pub(crate) fn next_wait(&self) -> Option<Instant> {
        self.next_deadline(false)
    }

    /// The next time a wait must end: `inside` a frame, the frame timeout counts too.
    fn next_deadline(&self, inside: bool) -> Option<Instant> {
        let ping = self
            .ping_interval
            .map(|p| self.last_heard.max(self.last_ping) + p);
        let idle = self.idle_timeout.map(|i| self.last_heard + i);
        let frame = inside.then(|| self.last_heard + self.frame_timeout);
        [self.close_deadline, ping, idle, frame]
            .into_iter()
            .flatten()
            .min()
    }
}

/// What the read loop needs from the connection: bytes with a timeout, and control frames out.
pub(crate) trait Duplex {
    /// What the bytes come from.
    type Src: Timed;
    /// The reading side, whose waits the timers bound.
    fn src(&mut self) -> &mut Self::Src;
    /// Sends a control frame.
    fn control(&mut self, op: OpCode, payload: &[u8]) -> Result<()>;
    /// Whether our close frame has gone out.
    fn close_sent(&self) -> bool;
    /// Ends our sending direction.
    fn shutdown_write(&mut self);
    /// Frees the writer's buffer if no other fiber is using it (before a long wait).
    fn release_out(&mut self);
}

/// The inbound reader's byte source over a [`Duplex`], running the timers.
pub(crate) struct Src<'a, D: Duplex> {
    pub(crate) io: &'a mut D,
    pub(crate) timers: &'a mut Timers,
    pub(crate) link: Option<&'a ServerLink>,
}

impl<D: Duplex> Src<'_, D> {
    /// Between messages, marks the connection idle in the tracker, so a shutdown wakes the
    /// wait; fails when the server already shuts down.
    fn mark_idle(&mut self, between: bool) -> io::Result<()> {
        if let Some(link) = self.link.filter(|_| between) {
            link.reg.state.idle.store(true, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if link.token.is_triggered() {
                link.reg.state.idle.store(false, Ordering::SeqCst);
                self.timers.stop = Some(Stop::Shutdown);
                return Err(io::ErrorKind::ConnectionAborted.into());
            }
        }
        Ok(())
    }

    /// The wait [`mark_idle`](Self::mark_idle) marked is over.
    fn unmark_idle(&self, between: bool) {
        if let Some(link) = self.link.filter(|_| between) {
            link.reg.state.idle.store(false, Ordering::SeqCst);
        }
    }
}

impl<D: Duplex> Source for Src<'_, D> {
    fn fill_soon(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        if self.timers.quiet_after.is_zero() {
            return Ok(None);
        }
        let now = Instant::now();
        if self
            .timers
            .next_deadline(false)
            .is_some_and(|d| d <= now + self.timers.quiet_after)
        {
            return self.fill(buf, true).map(Some);
        }
        self.mark_idle(true)?;
        let r = self.io.src().read_within(buf, self.timers.quiet_after);
        self.unmark_idle(true);
        match r {
            Ok(Some(n)) => {
                self.timers.last_heard = Instant::now();
                Ok(Some(n))
            }
            Ok(None) => Ok(None),
            // A TLS record begun but not finished in time, or a signal: the timed read that
            // follows takes it from here.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut
                        | io::ErrorKind::WouldBlock
                        | io::ErrorKind::Interrupted
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn fill_quiet(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(link) = self.link {
            link.reg.went_quiet();
        }
        self.io.src().release();
        self.io.release_out();
        moria_runtime::fiber::wait_trimmed(|| self.fill(buf, true))
    }

    fn fill(&mut self, buf: &mut [u8], between: bool) -> io::Result<usize> {
        loop {
            self.mark_idle(between)?;
            let now = Instant::now();
            let timeout = self.timers.next_deadline(!between).map(|d| {
                d.saturating_duration_since(now)
                    .max(Duration::from_millis(1))
            });
            if timeout != self.timers.timeout_set {
                self.io.src().set_read_timeout(timeout)?;
                self.timers.timeout_set = timeout;
            }
            let r = self.io.src().read(buf);
            self.unmark_idle(between);
            match r {
                Ok(n) => {
                    self.timers.last_heard = Instant::now();
                    return Ok(n);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                    ) =>
                {
                    let now = Instant::now();
                    let t = &mut *self.timers;
                    if t.close_deadline.is_some_and(|d| now >= d) {
                        t.stop = Some(Stop::CloseTimeout);
                        return Err(e);
                    }
                    if t.idle_timeout.is_some_and(|i| now >= t.last_heard + i) {
                        t.stop = Some(Stop::Idle);
                        return Err(e);
                    }
                    if !between && now >= t.last_heard + t.frame_timeout {
                        t.stop = Some(Stop::Stalled);
                        return Err(e);
                    }
                    if t.ping_interval
                        .is_some_and(|p| now >= t.last_heard.max(t.last_ping) + p)
                    {
                        t.last_ping = now;
                        if !self.io.close_sent() {
                            self.io
                                .control(OpCode::Ping, b"")
                                .map_err(io::Error::other)?;
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}
