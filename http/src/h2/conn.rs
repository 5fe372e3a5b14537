//! The connection: its own fiber checks the preface, sends the server's SETTINGS, reads and
//! applies every frame (`inbound.rs`), and ends with a GOAWAY (after the open streams finish,
//! or after lingering on an error); each request stream goes to a fiber of the connection's
//! pool (at most `MAX_CONCURRENT_STREAMS`, started as needed, reused), which answers it through
//! the shared writer.

use std::io::{self, Write};
use std::os::fd::RawFd;
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use moria_runtime::scope::scope;
use moria_runtime::sync::{channel, Receiver};
use moria_runtime::ShutdownToken;

use super::body::StreamBody;
use super::frame::{put_goaway, put_rst, put_window_update, ErrorCode};
use super::inbound::Conn;
use super::reader::FrameReader;
use super::send::StreamSender;
use super::settings::{put_server_settings, CONN_WINDOW, DEFAULT_WINDOW, MAX_CONCURRENT_STREAMS};
use super::shared::{Parked, Shared};
use super::{Call, Service, PREFACE};
use crate::ws::Timed;

/// Most bytes read and dropped after an error GOAWAY (see `linger`).
const LINGER_MAX: usize = 1 << 20;
/// Server-wide settings an HTTP/2 connection needs.
pub(crate) struct ConnConfig {
    /// How long a connection with no open stream waits for a frame (the socket's read
    /// timeout, set by the caller, bounds the reads after the GOAWAY).
    pub idle: Duration,
    /// How long a stream waits on the client (window, body) before giving up.
    pub stall: Duration,
    /// The server's streams parked on a zero window, and their cap.
    pub parked: Arc<Parked>,
}

/// A connection error: the GOAWAY code, and why (for the log).
#[derive(Debug)]
pub(super) struct ConnError(pub(super) ErrorCode, pub(super) &'static str);

pub(super) type Step = Result<(), ConnError>;

/// A request stream for the pool.
pub(super) struct Job {
    pub(super) id: u32,
    pub(super) head: Vec<u8>,
    pub(super) bodyless: bool,
}

/// Serves one HTTP/2 connection whose preface (if `preface_read` is false) is still to be read
/// from `read`; returns when it is closed. `fd` is the socket, whose reading side is shut to
/// wake this fiber when the last stream ends during a shutdown, or when a stream fiber finds
/// that the client stalled too many streams.
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve(
    read: &mut dyn Timed,
    write: Box<dyn Write + Send>,
    service: &dyn Service,
    cfg: &ConnConfig,
    token: &ShutdownToken,
    idle: &AtomicBool,
    fd: RawFd,
) -> io::Result<()> {
    let mut input = FrameReader::new(read, cfg.idle);
    input.fill(PREFACE.len())?;
    if input.take(PREFACE.len()) != PREFACE.as_slice() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not an HTTP/2 preface",
        ));
    }
    let shared = Shared::new(write, fd, cfg.stall, Arc::clone(&cfg.parked));
    shared.send(|out| {
        put_server_settings(out);
        put_window_update(out, 0, (CONN_WINDOW - DEFAULT_WINDOW) as u32);
    })?;
    let (jobs, queue) = channel::<Job>();
    let idle_workers = AtomicUsize::new(0);
    let workers = AtomicUsize::new(0);
    let ctx = WorkCtx {
        idle_workers: &idle_workers,
        idle,
        token,
    };
    scope(|s| {
        let mut conn = Conn::new(&shared);
        let mut start = |job: Job| {
            let took_idle = idle_workers
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                .is_ok();
            if !took_idle && workers.load(Ordering::Relaxed) < MAX_CONCURRENT_STREAMS as usize {
                workers.fetch_add(1, Ordering::Relaxed);
                let (q, sh, ctx) = (queue.clone(), &shared, &ctx);
                s.spawn(move || supervise(q, sh, service, ctx));
            }
            // The queue outlives every sender: sending cannot fail.
            let _ = jobs.send(job);
        };
        let r = conn.run(&mut input, &mut start, token, idle);
        let end = match &r {
            Ok(()) => Some((ErrorCode::NoError, "done")),
            Err(Failure::Conn(ConnError(code, why))) => Some((*code, *why)),
            Err(Failure::Io(_)) => None,
        };
        if let Some((code, why)) = end {
            log::debug!("HTTP/2 connection ends: {why} ({code:?})");
            let last = conn.last_stream;
            let _ = shared.send(|out| put_goaway(out, last, code));
        }
        if let Some((code, _)) = end {
            if code == ErrorCode::NoError {
                wait_streams(&shared, cfg.stall);
            }
            // The streams stop, no frame is cut short by the end of sending, and what the
            // client still sends is read, so the close does not reset the connection before
            // the client has read everything.
            shared.state().dead = true;
            shared.changed.notify_all();
            shared.shut_write();
            linger(&mut input, idle, token);
        }
        shared.state().dead = true;
        shared.changed.notify_all();
        drop(jobs);
        match r {
            Err(Failure::Io(e)) => Err(e),
            _ => Ok(()),
        }
    })
}

/// After the GOAWAY and the end of sending: reads (up to [`LINGER_MAX`] bytes, within the
/// socket's read timeout) what the client still sends, so the close does not reset the
/// connection before the client reads the GOAWAY. Idle meanwhile: a shutdown ends it.
fn linger(input: &mut FrameReader<'_>, idle: &AtomicBool, token: &ShutdownToken) {
    idle.store(true, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    if token.is_triggered() {
        return;
    }
    let mut scratch = [0u8; 4096];
    let mut total = 0;
    while total < LINGER_MAX {
        match input.io.read(&mut scratch) {
            Ok(0) | Err(_) => return,
            Ok(n) => total += n,
        }
    }
}

/// Waits (at most `limit` without progress) for the open streams to finish.
fn wait_streams(shared: &Shared, limit: Duration) {
    let mut st = shared.state();
    while !st.streams.is_empty() {
        if shared.changed.wait_timeout(&mut st, limit) {
            return;
        }
    }
}

/// Runs a pool fiber, and another in its place each time one dies without returning (a stack
/// overflow abandons its frames, so nothing of it unwinds): the stream it served is reset
/// (INTERNAL_ERROR) and its slot freed at once, so the connection keeps its capacity.
fn supervise(queue: Receiver<Job>, shared: &Shared, service: &dyn Service, ctx: &WorkCtx<'_>) {
    let serving = AtomicU32::new(0);
    loop {
        let (q, serving) = (queue.clone(), &serving);
        let returned = scope(|inner| {
            inner
                .spawn(move || work(q, shared, service, ctx, serving))
                .join()
                .is_ok()
        });
        if returned {
            return;
        }
        let id = serving.swap(0, Ordering::AcqRel);
        log::warn!("HTTP/2 stream {id}: its fiber died (stack overflow); stream reset");
        let quiet = {
            let mut st = shared.state();
            st.streams.remove(&id);
            st.streams.is_empty()
        };
        shared.changed.notify_all();
        let _ = shared.send(|out| put_rst(out, id, ErrorCode::Internal));
        if quiet {
            went_quiet(shared, ctx);
        }
    }
}

/// The last open stream just ended: the reading fiber, which may be waiting with a stream
/// open, is idle now, for a shutdown to wake (and if the shutdown already began, it is woken
/// here).
fn went_quiet(shared: &Shared, ctx: &WorkCtx<'_>) {
    ctx.idle.store(true, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    if ctx.token.is_triggered() {
        shared.shut_read();
    }
}

/// A pool fiber: serves streams until the connection ends, each one's id in `serving`
/// meanwhile.
fn work(
    queue: Receiver<Job>,
    shared: &Shared,
    service: &dyn Service,
    ctx: &WorkCtx<'_>,
    serving: &AtomicU32,
) {
    while let Ok(job) = queue.recv() {
        let id = job.id;
        serving.store(id, Ordering::Release);
        service.serve(Call {
            head: job.head,
            bodyless: job.bodyless,
            body: StreamBody::new(shared, id),
            send: StreamSender::new(shared, id),
        });
        let (slot, quiet) = {
            let mut st = shared.state();
            let slot = st.streams.remove(&id);
            (slot, st.streams.is_empty())
        };
        shared.changed.notify_all();
        if let Some(slot) = slot.filter(|s| !s.recv_end && !s.reset) {
            // The answer is complete before the request: the client may stop sending
            // (RFC 9113 §8.1), and what it sent unread is credited back to the connection.
            let unread = slot.buffered as u32;
            shared.state().recv_window += i64::from(unread);
            let _ = shared.send(|out| {
                put_rst(out, id, ErrorCode::NoError);
                if unread > 0 {
                    put_window_update(out, 0, unread);
                }
            });
        }
        serving.store(0, Ordering::Release);
        ctx.idle_workers.fetch_add(1, Ordering::AcqRel);
        if quiet {
            went_quiet(shared, ctx);
        }
    }
}

/// What the pool fibers share besides the connection state.
struct WorkCtx<'a> {
    idle_workers: &'a AtomicUsize,
    idle: &'a AtomicBool,
    token: &'a ShutdownToken,
}

/// What ended the loop.
pub(super) enum Failure {
    Conn(ConnError),
    Io(io::Error),
}

impl From<ConnError> for Failure {
    fn from(e: ConnError) -> Failure {
        Failure::Conn(e)
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Io(e)
    }
}
