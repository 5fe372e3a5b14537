//! `BufStream`: read and write buffering over one `Read + Write` stream.

use std::io::{self, BufRead, BufReader, BufWriter, IoSlice, Read, Write};

/// Default capacity of each of the two buffers, in bytes.
pub const DEFAULT_BUF_SIZE: usize = 8 * 1024;

/// A stream with a read buffer and a write buffer, like `BufReader` and `BufWriter` in one.
///
/// Before it blocks on the inner stream for input, it flushes the pending output: a request or a
/// response written through it is always on the wire before the peer's answer is awaited, and
/// pipelined requests already in the read buffer are answered in one batched write. Buffered
/// output is also flushed on drop (errors ignored, as `BufWriter` does); call `flush` to see them.
#[derive(Debug)]
pub struct BufStream<S: Write> {
    inner: BufReader<FlushBeforeRead<S>>,
}

impl<S: Read + Write> BufStream<S> {
    /// Wraps `inner` with two buffers of [`DEFAULT_BUF_SIZE`] bytes.
    pub fn new(inner: S) -> Self {
        Self::with_capacities(DEFAULT_BUF_SIZE, DEFAULT_BUF_SIZE, inner)
    }

    /// Wraps `inner` with a read buffer of `read` bytes and a write buffer of `write` bytes.
    pub fn with_capacities(read: usize, write: usize, inner: S) -> Self {
        BufStream {
            inner: BufReader::with_capacity(
                read,
                FlushBeforeRead(BufWriter::with_capacity(write, inner)),
            ),
        }
    }
}

impl<S: Write> BufStream<S> {
    /// The inner stream.
    pub fn get_ref(&self) -> &S {
        self.inner.get_ref().0.get_ref()
    }

    /// The inner stream, mutably (using it directly bypasses both buffers).
    pub fn get_mut(&mut self) -> &mut S {
        self.inner.get_mut().0.get_mut()
    }

    /// Bytes read from the inner stream and not yet consumed.
    pub fn read_buffer(&self) -> &[u8] {
        self.inner.buffer()
    }

    /// Bytes written and not yet flushed to the inner stream.
    pub fn write_buffer(&self) -> &[u8] {
        self.inner.get_ref().0.buffer()
    }

    /// Flushes pending output and gives back the inner stream with the unread bytes.
    ///
    /// On a flush error the stream is lost with the error; the unread bytes are dropped too.
    pub fn into_parts(self) -> io::Result<(S, Vec<u8>)> {
        let unread = self.inner.buffer().to_vec();
        let writer = self.inner.into_inner().0;
        let inner = writer.into_inner().map_err(|e| e.into_error())?;
        Ok((inner, unread))
    }
}

impl<S: Read + Write> Read for BufStream<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf)
    }
}

impl<S: Read + Write> BufRead for BufStream<S> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt)
    }
}

impl<S: Write> Write for BufStream<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.get_mut().0.write(buf)
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.inner.get_mut().0.write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.get_mut().0.flush()
    }
}

/// The write half: a `BufWriter` whose reads flush it first.
#[derive(Debug)]
struct FlushBeforeRead<S: Write>(BufWriter<S>);

impl<S: Read + Write> Read for FlushBeforeRead<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.0.buffer().is_empty() {
            self.0.flush()?;
        }
        self.0.get_mut().read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read_until_limit;
    use std::io::Cursor;

    /// A stream whose reads record how much output had reached it at that moment.
    struct Recorder {
        input: Cursor<Vec<u8>>,
        output: Vec<u8>,
        output_at_reads: Vec<usize>,
    }

    impl Recorder {
        fn new(input: &[u8]) -> Self {
            Recorder {
                input: Cursor::new(input.to_vec()),
                output: Vec::new(),
                output_at_reads: Vec::new(),
            }
        }
    }

    impl Read for Recorder {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.output_at_reads.push(self.output.len());
            self.input.read(buf)
        }
    }

    impl Write for Recorder {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.output.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn output_is_flushed_before_blocking_for_input() {
        let mut s = BufStream::new(Recorder::new(b"reply\n"));
        s.write_all(b"request\n").unwrap();
        assert_eq!(s.get_ref().output.len(), 0);
        let mut line = Vec::new();
        read_until_limit(&mut s, b'\n', 64, &mut line).unwrap();
        assert_eq!(line, b"reply\n");
        assert_eq!(s.get_ref().output_at_reads, vec![8]);
    }

    #[test]
    fn buffered_input_is_served_without_flushing() {
        let mut s = BufStream::new(Recorder::new(b"one\ntwo\n"));
        let mut line = Vec::new();
        read_until_limit(&mut s, b'\n', 64, &mut line).unwrap();
        s.write_all(b"answer one\n").unwrap();
        line.clear();
        read_until_limit(&mut s, b'\n', 64, &mut line).unwrap();
        assert_eq!(line, b"two\n");
        assert!(s.get_ref().output.is_empty());
        assert_eq!(s.write_buffer(), b"answer one\n");
    }

    #[test]
    fn into_parts_returns_unread_bytes_and_flushes() {
        let mut s = BufStream::new(Recorder::new(b"head\nbody"));
        let mut line = Vec::new();
        read_until_limit(&mut s, b'\n', 64, &mut line).unwrap();
        s.write_all(b"out").unwrap();
        let (inner, unread) = s.into_parts().unwrap();
        assert_eq!(unread, b"body");
        assert_eq!(inner.output, b"out");
    }

    #[test]
    fn drop_flushes_pending_output() {
        let mut out = Vec::new();
        {
            let mut s = BufStream::new(Duplex(&b""[..], &mut out));
            s.write_all(b"bye").unwrap();
        }
        assert_eq!(out, b"bye");
    }

    #[test]
    fn zero_length_read_and_write() {
        let mut s = BufStream::new(Recorder::new(b"x"));
        assert_eq!(s.read(&mut []).unwrap(), 0);
        assert_eq!(s.write(b"").unwrap(), 0);
    }

    /// Reads fail with ConnectionReset; writes fail with BrokenPipe after `room` bytes.
    struct Failing {
        room: usize,
    }

    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::ErrorKind::ConnectionReset.into())
        }
    }

    impl Write for Failing {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn errors_in_the_middle_reach_the_caller() {
        let mut s = BufStream::with_capacities(16, 16, Failing { room: 4 });
        s.write_all(b"0123456789").unwrap();
        // The read must flush first; the flush fails part-way and says so.
        let err = s.read(&mut [0; 4]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(s.write_buffer(), b"456789");
        s.get_mut().room = usize::MAX;
        let err = s.read(&mut [0; 4]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
        assert!(s.write_buffer().is_empty());
        assert!(s.into_parts().is_ok());
    }

    struct Duplex<R, W>(R, W);
    impl<R: Read, W> Read for Duplex<R, W> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.0.read(buf)
        }
    }
    impl<R, W: Write> Write for Duplex<R, W> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.1.write(buf)
        }
        fn flush(&mut self) -> io::Result<()> {
            self.1.flush()
        }
    }
}
