//! Full duplex TLS: [`TlsStream::split`] gives a [`TlsReader`] and a [`TlsWriter`] that two
//! fibers use at once.
//!
//! Both halves share the TLS session behind a lock that is only held while it runs (it never
//! waits: its transport is memory, see `memio.rs`), never across a socket wait. Each
//! half of the socket (`TcpStream::split`: one descriptor, a reader and a writer) sits behind a
//! fiber lock, held across that half's waits, so one fiber at a time reads and one writes:
//!
//! - bytes OpenSSL produced (records, and handshake answers a read can produce: a TLS 1.3
//!   KeyUpdate, a TLS 1.2 renegotiation) are taken out of the session and sent only while the
//!   write lock is held, so records leave in the order they were made;
//! - an operation that needs more input (`WANT_READ`: the reader's usual wait, or a writer in a
//!   renegotiation) takes the read lock, and reads the socket only if nobody fed the session
//!   since the operation ran (a counter under the session lock says so); otherwise it just
//!   retries. So a fiber can never sleep on the socket while input that would satisfy it is
//!   already in the session, whichever half consumed or fed it.
//!
//! A reader about to wait long ([`TlsReader::release_buffers`]) gives back the session's
//! buffers and its socket-read buffer; its next socket read lands in a small array on the
//! stack, and only the read after that allocates the buffer again.

use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use moria_runtime::net::{TcpReader, TcpStream, TcpWriter};
use moria_runtime::sync::Mutex as FiberMutex;

use super::memio::MAX_FEED;
use super::session::Session;
use super::stop::Stop;
use super::stream::{TlsStream, MAX_WRITE_CHUNK};

/// The TLS session and how many times input was fed to it.
struct SessionWithFeeds {
    ssl: Session,
    fed: u64,
}

/// A released reader's next socket read lands in an array this size on the stack (a small
/// message's record fits); a larger record's rest comes with the next read, into the buffer.
const QUIET_FEED: usize = 512;

/// What both halves share.
struct Shared {
    session: Mutex<SessionWithFeeds>,
    /// The socket's reading half and its read buffer ([`MAX_FEED`] bytes, or empty once
    /// released).
    reader: FiberMutex<(TcpReader, Vec<u8>)>,
    writer: FiberMutex<TcpWriter>,
}

/// The reading half of a split [`TlsStream`]; `Read`.
pub struct TlsReader {
    shared: Arc<Shared>,
}

/// The writing half of a split [`TlsStream`]; `Write`, and [`shutdown`](TlsWriter::shutdown)
/// to end the writing direction.
pub struct TlsWriter {
    shared: Arc<Shared>,
}

impl TlsStream<TcpStream> {
    /// Splits into a reader and a writer that two fibers can use at the same time. Timeouts
    /// set on the socket before the split still apply to each half. A TLS 1.3 server session
    /// moves to Moria's record layer here if it can (a split stream lives long; see the crate
    /// README, "TLS 1.3 records after the handshake").
    pub fn split(mut self) -> io::Result<(TlsReader, TlsWriter)> {
        self.settle();
        let (ssl, sock) = self.into_parts();
        let (reader, writer) = sock.split()?;
        let shared = Arc::new(Shared {
            session: Mutex::new(SessionWithFeeds { ssl, fed: 0 }),
            reader: FiberMutex::new((reader, vec![0u8; MAX_FEED])),
            writer: FiberMutex::new(writer),
        });
        Ok((
            TlsReader {
                shared: shared.clone(),
            },
            TlsWriter { shared },
        ))
    }
}

impl Shared {
    fn session(&self) -> MutexGuard<'_, SessionWithFeeds> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Repeats `op` until it succeeds or fails for good, moving bytes between the session and
    /// the socket between tries.
    fn drive<T>(&self, mut op: impl FnMut(&mut Session) -> Result<T, Stop>) -> io::Result<T> {
        loop {
            let (result, fed) = {
                let mut session = self.session();
                session.ssl.clear_errors();
                (op(&mut session.ssl), session.fed)
            };
            self.send_pending()?;
            match result {
                Ok(value) => return Ok(value),
                Err(Stop::WantRead) => self.feed_unless_fed_since(fed)?,
                Err(Stop::WantWrite) => {}
                Err(Stop::Failed(failure)) => return Err(self.session().ssl.io_error(failure)),
            }
        }
    }

    /// Sends what OpenSSL produced, if anything, taking it only under the write lock.
    fn send_pending(&self) -> io::Result<()> {
        if !self.session().ssl.io().has_outbound() {
            return Ok(());
        }
        let mut writer = self.writer.lock();
        let bytes = self.session().ssl.io_mut().take_outbound();
        if bytes.is_empty() {
            return Ok(());
        }
        writer.write_all(&bytes)?;
        writer.flush()
    }

    /// Reads the socket once into the session, unless input was fed since the count `fed`.
    fn feed_unless_fed_since(&self, fed: u64) -> io::Result<()> {
        self.feed_within(fed, None).map(drop)
    }

    /// As [`feed_unless_fed_since`](Self::feed_unless_fed_since), waiting for bytes up to
    /// about `within` if given ([`TcpReader::read_within`]); `false` when that time passed
    /// first.
    fn feed_within(&self, fed: u64, within: Option<Duration>) -> io::Result<bool> {
        let mut reader = self.reader.lock();
        if self.session().fed != fed {
            return Ok(true);
        }
        let (sock, buf) = &mut *reader;
        let mut quiet = [0u8; QUIET_FEED];
        // Released: wait holding no buffer (see the module docs).
        let room: &mut [u8] = if buf.is_empty() {
            &mut quiet
        } else {
            &mut buf[..]
        };
        let n = loop {
            let r = match within {
                Some(t) => sock.read_within(room, t),
                None => sock.read(room).map(Some),
            };
            match r {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Ok(None) => return Ok(false),
                Ok(Some(n)) => break n,
                Err(e) => return Err(e),
            }
        };
        let mut session = self.session();
        session.ssl.io_mut().feed(&room[..n])?;
        session.fed += 1;
        drop(session);
        if buf.is_empty() && n > 0 {
            buf.resize(MAX_FEED, 0);
        }
        Ok(true)
    }
}

impl Read for TlsReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.shared.drive(|s| s.read(buf))
    }
}

impl TlsReader {
    /// Reads what arrives within about `within`, `Ok(None)` when that time passed first, as
    /// [`TlsStream::read_within`]: the wait for the first bytes arms no timer; completing a
    /// record that arrived in part waits with the read timeout.
    pub fn read_within(&mut self, buf: &mut [u8], within: Duration) -> io::Result<Option<usize>> {
        if !buf.is_empty() {
            let fed = {
                let mut session = self.shared.session();
                let idle = !session.ssl.has_buffered_input() && !session.ssl.input_ended();
                idle.then_some(session.fed)
            };
            if let Some(fed) = fed {
                if !self.shared.feed_within(fed, Some(within))? {
                    return Ok(None);
                }
            }
        }
        self.read(buf).map(Some)
    }

    /// Sets the socket's read timeout (`None`: wait forever); the writer's is its own.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.shared.reader.lock().0.set_read_timeout(timeout)
    }

    /// For a reader about to wait long: frees the session's buffers while they hold nothing
    /// (as [`TlsStream::release_buffers`]) and the socket-read buffer, unless a writer is
    /// reading the socket just now (a renegotiation).
    pub fn release_buffers(&mut self) {
        let Some(mut reader) = self.shared.reader.try_lock() else {
            return;
        };
        let mut session = self.shared.session();
        if !session.ssl.has_buffered_input() {
            session.ssl.release();
        }
        reader.1 = Vec::new();
    }
}

impl TlsWriter {
    /// Sends close_notify, then shuts the socket's writing direction: the peer reads end of
    /// stream while the reader half keeps receiving (a TLS 1.3 half-close).
    pub fn shutdown(&mut self) -> io::Result<()> {
        self.shared.drive(Session::shutdown)?;
        self.shared.writer.lock().shutdown_write()
    }
}

impl Write for TlsWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let chunk = &buf[..buf.len().min(MAX_WRITE_CHUNK)];
        self.shared.drive(|s| s.write(chunk))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.shared.send_pending()
    }
}

impl std::fmt::Debug for TlsReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsReader").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for TlsWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsWriter").finish_non_exhaustive()
    }
}
