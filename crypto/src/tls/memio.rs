//! The in-memory transport OpenSSL talks to: an inbound buffer filled from the socket and an
//! outbound buffer drained to it, by the fiber, between OpenSSL calls. Reads from an empty
//! inbound buffer say `WouldBlock`, so OpenSSL returns `WANT_READ` instead of ever waiting.
//!
//! On a socket ([`MemIo::send_directly`]) records go out straight from OpenSSL's buffer: a
//! `send(2)` that takes what fits and never waits, and only what it does not take is
//! copied to the outbound buffer for the fiber to send (waiting if need be). That saves a copy
//! of every record, and the outbound buffer stays empty (no memory) while the socket keeps up.

use std::io::{self, Read, Write};
use std::os::fd::RawFd;
use std::time::Duration;

use moria_runtime::net::TcpStream;

use super::record::{HEADER_LEN, MAX_CIPHERTEXT};

/// Most bytes one socket read brings at a time: the split reader's chunk (`fill_from` reads at
/// most the room left).
pub(crate) const MAX_FEED: usize = 16 * 1024;
/// Largest inbound buffer. A session asks for more bytes only while what it has not taken is
/// less than one record (at most 5 + 2^14 + 256 bytes: OpenSSL takes a record's bytes as it
/// reads them, the Moria session takes a record only once it is whole), and one read adds at most
/// [`MAX_FEED`].
pub(crate) const INBOUND_LEN: usize = HEADER_LEN + MAX_CIPHERTEXT + MAX_FEED;
/// First inbound buffer: a request's record or a handshake flight fits. OpenSSL takes the bytes
/// out as it reads (it keeps partial records itself), so a smaller buffer only means more reads
/// for large records: when a read fills the buffer, the next fill gets twice the room, up to
/// [`INBOUND_LEN`]. Allocated at the first read, and again once bytes arrive after
/// [`MemIo::release`].
pub(crate) const INBOUND_FIRST: usize = 4 * 1024;

/// Buffers between OpenSSL and the socket.
#[derive(Debug)]
pub(crate) struct MemIo {
    inbound: Vec<u8>,
    start: usize,
    end: usize,
    /// Room the next socket read gets (grows while reads fill it).
    read_room: usize,
    eof: bool,
    /// The inbound buffer was released and not allocated since: the next read lands in the
    /// caller's spare room (see [`MemIo::fill_from`]).
    released: bool,
    outbound: Vec<u8>,
    /// The socket records may be sent to directly, if any.
    direct: Option<RawFd>,
}

impl MemIo {
    /// Empty buffers.
    pub(crate) fn new() -> Self {
        MemIo {
            inbound: Vec::new(),
            start: 0,
            end: 0,
            read_room: INBOUND_FIRST,
            eof: false,
            released: false,
            outbound: Vec::new(),
            direct: None,
        }
    }

    /// Lets [`Write`] send records to the socket `fd` itself while nothing waits in the
    /// outbound buffer (`None`: never). `fd` must stay open while this is set.
    pub(crate) fn send_directly(&mut self, fd: Option<RawFd>) {
        self.direct = fd;
    }

    /// Whether the socket reported end of stream.
    pub(crate) fn eof(&self) -> bool {
        self.eof
    }

    /// Whether received bytes wait in the inbound buffer.
    pub(crate) fn has_input(&self) -> bool {
        self.start < self.end
    }

    /// Frees both buffers if they hold nothing (an idle connection keeps no buffer, nor does
    /// its next socket read while it waits); the inbound one is allocated again once bytes
    /// arrive.
    pub(crate) fn release(&mut self) {
        if self.start == self.end {
            self.inbound = Vec::new();
            self.start = 0;
            self.end = 0;
            self.released = true;
        }
        if self.outbound.is_empty() {
            self.outbound = Vec::new();
        }
    }

    /// Moves unread inbound bytes to the front and makes room for `want` more after them
    /// (allocating or growing the buffer, at most to [`INBOUND_LEN`]); fails when that does not
    /// fit.
    fn make_room(&mut self, want: usize) -> io::Result<()> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.start > 0 {
            self.inbound.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let need = self.end + want;
        if need > INBOUND_LEN {
            return Err(io::Error::other("TLS inbound buffer full"));
        }
        if need > self.inbound.len() {
            let size = need.max(self.inbound.len() * 2).min(INBOUND_LEN);
            self.inbound.resize(size, 0);
            self.released = false;
        }
        Ok(())
    }

    /// Appends bytes read from the socket elsewhere; empty `data` records end of stream.
    pub(crate) fn feed(&mut self, data: &[u8]) -> io::Result<()> {
        if data.is_empty() {
            self.eof = true;
            return Ok(());
        }
        self.make_room(data.len())?;
        self.inbound[self.end..self.end + data.len()].copy_from_slice(data);
        self.end += data.len();
        Ok(())
    }

    /// Whether OpenSSL produced bytes not yet sent.
    pub(crate) fn has_outbound(&self) -> bool {
        !self.outbound.is_empty()
    }

    /// Takes every byte OpenSSL produced so far, in order, for the caller to send.
    pub(crate) fn take_outbound(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.outbound)
    }

    /// The received bytes not yet taken.
    pub(crate) fn unread(&self) -> &[u8] {
        &self.inbound[self.start..self.end]
    }

    /// Takes the first `n` unread bytes (at most as many as there are).
    pub(crate) fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
    }

    /// Appends what `make` writes to the outbound bytes and, where records may go straight to
    /// the socket and nothing was waiting, sends what the socket takes at once (as [`Write`]
    /// does). If `make` fails, nothing it wrote is kept.
    pub(crate) fn produce(
        &mut self,
        make: impl FnOnce(&mut Vec<u8>) -> io::Result<()>,
    ) -> io::Result<()> {
        let queued = self.outbound.len();
        if let Err(e) = make(&mut self.outbound) {
            self.outbound.truncate(queued);
            return Err(e);
        }
        if let (Some(fd), 0) = (self.direct, queued) {
            let sent = write_now(fd, &self.outbound);
            self.outbound.drain(..sent);
        }
        Ok(())
    }

    /// One read from `sock` into the inbound buffer (this may wait, so it runs outside OpenSSL).
    /// After [`MemIo::release`] the read lands in `spare` (the caller's buffer for the
    /// plaintext, unused while it waits) and only the bytes that came are copied in: a
    /// connection waiting after a release holds no inbound buffer. An empty `spare` (or one
    /// that the arriving bytes overflow: the rest comes with the next read) costs only reads.
    pub(crate) fn fill_from<S: Read>(&mut self, sock: &mut S, spare: &mut [u8]) -> io::Result<()> {
        self.fill_with(|room| sock.read(room).map(Some), spare)
            .map(drop)
    }

    /// One read from `sock` into the inbound buffer of what arrives within about `within`
    /// ([`TcpStream::read_within`]: no timer, and no look at a socket the last such read
    /// emptied); `false` when the time passed first. `spare` as for [`MemIo::fill_from`].
    pub(crate) fn fill_within(
        &mut self,
        sock: &mut TcpStream,
        within: Duration,
        spare: &mut [u8],
    ) -> io::Result<bool> {
        self.fill_with(|room| sock.read_within(room, within), spare)
    }

    /// One `read` into the room after the unread bytes, or into `spare` after a release
    /// (`Ok(None)`: nothing came, `false`).
    fn fill_with(
        &mut self,
        mut read: impl FnMut(&mut [u8]) -> io::Result<Option<usize>>,
        spare: &mut [u8],
    ) -> io::Result<bool> {
        if self.released && !spare.is_empty() {
            let Some(n) = read_once(&mut read, spare)? else {
                return Ok(false);
            };
            if n > 0 {
                // The buffer is allocated at its usual size only now that bytes came.
                self.make_room(self.read_room.max(n))?;
                self.inbound[..n].copy_from_slice(&spare[..n]);
            }
            return Ok(self.filled(n));
        }
        let want = self
            .read_room
            .min(INBOUND_LEN - (self.end - self.start))
            .max(1);
        self.make_room(want)?;
        let Some(n) = read_once(&mut read, &mut self.inbound[self.end..self.end + want])? else {
            return Ok(false);
        };
        if n == want {
            self.read_room = (want * 2).min(INBOUND_LEN);
        }
        Ok(self.filled(n))
    }

    /// Counts `n` bytes just put after the unread ones (0: end of stream); `true`.
    fn filled(&mut self, n: usize) -> bool {
        self.end += n;
        self.eof |= n == 0;
        true
    }

    /// Writes everything OpenSSL produced to `sock` (this may wait, so it runs outside OpenSSL).
    pub(crate) fn flush_to<S: Write>(&mut self, sock: &mut S) -> io::Result<()> {
        if self.outbound.is_empty() {
            return Ok(());
        }
        let result = sock.write_all(&self.outbound).and_then(|()| sock.flush());
        self.outbound.clear();
        result
    }
}

impl Read for MemIo {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.start == self.end {
            return if self.eof {
                Ok(0)
            } else {
                Err(io::ErrorKind::WouldBlock.into())
            };
        }
        let n = buf.len().min(self.end - self.start);
        buf[..n].copy_from_slice(&self.inbound[self.start..self.start + n]);
        self.start += n;
        Ok(n)
    }
}

impl Write for MemIo {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let sent = match self.direct {
            // Bytes already waiting go first: nothing may overtake them.
            Some(fd) if self.outbound.is_empty() => write_now(fd, buf),
            _ => 0,
        };
        self.outbound.extend_from_slice(&buf[sent..]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One `read` into `room`, again after a signal.
fn read_once(
    read: &mut impl FnMut(&mut [u8]) -> io::Result<Option<usize>>,
    room: &mut [u8],
) -> io::Result<Option<usize>> {
    loop {
        match read(room) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// What one `send(2)` on the socket `fd` took of `buf`, without waiting. A full socket or an
/// error sends nothing: the bytes are buffered, and the fiber's write meets the error (or
/// waits) again.
fn write_now(fd: RawFd, buf: &[u8]) -> usize {
    loop {
        match moria_runtime::net::send_now(fd, buf) {
            Ok(n) => return n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_inbound_would_block_until_eof() {
        let mut io = MemIo::new();
        let mut buf = [0u8; 4];
        assert_eq!(
            io.read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        io.fill_from(&mut &b"abcdef"[..], &mut []).unwrap();
        assert_eq!(io.read(&mut buf).unwrap(), 4);
        assert_eq!(io.read(&mut buf).unwrap(), 2);
        io.fill_from(&mut &b""[..], &mut []).unwrap();
        assert!(io.eof());
        assert_eq!(io.read(&mut buf).unwrap(), 0);
    }

    #[test]
    fn outbound_is_drained_to_the_socket() {
        let mut io = MemIo::new();
        io.write_all(b"hello").unwrap();
        let mut sock = Vec::new();
        io.flush_to(&mut sock).unwrap();
        io.flush_to(&mut sock).unwrap();
        assert_eq!(sock, b"hello");
    }

    #[test]
    fn fed_bytes_are_read_and_outbound_is_taken_in_order() {
        let mut io = MemIo::new();
        io.feed(b"abc").unwrap();
        io.feed(b"de").unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(io.read(&mut buf).unwrap(), 5);
        assert_eq!(&buf[..5], b"abcde");
        assert!(io.feed(&vec![0u8; INBOUND_LEN + 1]).is_err());
        io.feed(b"").unwrap();
        assert_eq!(io.read(&mut buf).unwrap(), 0);
        io.write_all(b"one").unwrap();
        io.write_all(b"two").unwrap();
        assert!(io.has_outbound());
        assert_eq!(io.take_outbound(), b"onetwo");
        assert!(!io.has_outbound());
    }

    #[test]
    fn a_whole_feed_fits_behind_the_largest_partial_record() {
        let mut io = MemIo::new();
        io.feed(&vec![1u8; HEADER_LEN + MAX_CIPHERTEXT - 1])
            .unwrap();
        io.feed(&vec![2u8; MAX_FEED]).unwrap();
        assert_eq!(
            io.unread().len(),
            HEADER_LEN + MAX_CIPHERTEXT - 1 + MAX_FEED
        );
    }

    #[test]
    fn release_keeps_unread_bytes_and_frees_an_empty_buffer() {
        let mut io = MemIo::new();
        io.feed(b"abcdef").unwrap();
        io.release();
        assert!(io.has_input(), "unread bytes survive a release");
        let mut buf = [0u8; 8];
        assert_eq!(io.read(&mut buf).unwrap(), 6);
        io.release();
        assert_eq!(io.inbound.capacity(), 0);
        io.feed(b"gh").unwrap();
        assert_eq!(io.read(&mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], b"gh");
    }

    #[test]
    fn a_released_buffer_waits_in_the_spare_room_and_is_allocated_when_bytes_come() {
        let mut io = MemIo::new();
        io.feed(b"first").unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(io.read(&mut buf).unwrap(), 5);
        io.release();
        let mut spare = [0u8; 64];
        let spare_at = spare.as_ptr();
        // A wait that brings nothing allocates nothing, and the read got the spare room.
        let came = io
            .fill_with(
                |room| {
                    assert_eq!(room.as_ptr(), spare_at, "the read lands in the spare room");
                    Ok(None)
                },
                &mut spare,
            )
            .unwrap();
        assert!(!came);
        assert_eq!(io.inbound.capacity(), 0, "nothing allocated for the wait");
        io.fill_from(&mut &b"next"[..], &mut spare).unwrap();
        assert_eq!(
            io.inbound.len(),
            INBOUND_FIRST,
            "allocated at its usual size"
        );
        assert_eq!(io.unread(), b"next");
        // The rest of a record goes straight into the buffer.
        io.fill_from(&mut &b" record"[..], &mut spare).unwrap();
        assert_eq!(io.unread(), b"next record");
        // No spare room: the read allocates first, as before.
        io.consume(11);
        io.release();
        io.fill_from(&mut &b"x"[..], &mut []).unwrap();
        assert_eq!(io.unread(), b"x");
        // End of stream after a release.
        io.consume(1);
        io.release();
        io.fill_from(&mut &b""[..], &mut spare).unwrap();
        assert!(io.eof());
        assert_eq!(io.inbound.capacity(), 0);
    }

    #[test]
    fn records_go_straight_to_the_socket_and_only_the_rest_is_buffered() {
        use std::os::fd::AsRawFd;
        use std::os::unix::net::UnixStream;

        let (ours, mut peer) = UnixStream::pair().unwrap();
        let mut io = MemIo::new();
        io.send_directly(Some(ours.as_raw_fd()));
        io.write_all(b"first").unwrap();
        assert!(
            !io.has_outbound(),
            "a record the socket takes is not copied"
        );
        let mut got = [0u8; 5];
        peer.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"first");

        // More than the socket takes: the rest waits in order, and later records queue behind
        // it even once the socket has room again.
        let big: Vec<u8> = (0..4 << 20).map(|i: u32| (i % 253) as u8).collect();
        io.write_all(&big).unwrap();
        assert!(io.has_outbound(), "a full socket leaves bytes to send");
        let mut head = vec![0u8; 64 * 1024];
        peer.read_exact(&mut head).unwrap();
        io.write_all(b"last").unwrap();
        let reader = std::thread::spawn(move || {
            let mut all = head;
            peer.read_to_end(&mut all).unwrap();
            all
        });
        io.send_directly(None);
        io.flush_to(&mut &ours).unwrap();
        drop(ours);
        let mut want = big;
        want.extend_from_slice(b"last");
        assert!(reader.join().unwrap() == want, "every byte once, in order");
    }

    #[test]
    fn a_direct_write_that_fails_leaves_the_error_to_the_fiber() {
        use std::os::fd::AsRawFd;
        use std::os::unix::net::UnixStream;

        let (ours, peer) = UnixStream::pair().unwrap();
        drop(peer);
        let mut io = MemIo::new();
        io.send_directly(Some(ours.as_raw_fd()));
        io.write_all(b"lost").unwrap();
        assert!(io.has_outbound(), "nothing was sent, so it is kept");
        assert_eq!(
            io.flush_to(&mut &ours).unwrap_err().kind(),
            io::ErrorKind::BrokenPipe
        );
    }

    #[test]
    fn the_inbound_buffer_starts_small_and_grows_while_reads_fill_it() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut sock = &data[..];
        let mut io = MemIo::new();
        let mut got = Vec::new();
        let mut fills = Vec::new();
        while !io.eof() {
            io.fill_from(&mut sock, &mut []).unwrap();
            fills.push(io.end - io.start);
            assert!(io.inbound.len() <= INBOUND_LEN);
            io.read_to_end(&mut got).unwrap_or_else(|e| {
                assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
                0
            });
        }
        assert_eq!(got, data, "every byte, in order");
        assert_eq!(&fills[..4], &[4096, 8192, 16384, 32768], "{fills:?}");
        assert_eq!(fills[4], INBOUND_LEN, "{fills:?}");
        assert_eq!(fills[5], INBOUND_LEN, "stays at the largest size");
    }
}
