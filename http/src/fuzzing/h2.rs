//! One HTTP/2 connection over a byte slice, for bench's `fuzz_h2`: the bytes after the client
//! preface go through the connection's real code (`h2::serve`: frame reader, inbound state
//! machine, HPACK decoder, stream pool, body reader, response sender) with a small service on
//! every stream, and what the server wrote comes back.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use moria_runtime::ShutdownToken;

use crate::h2::{
    serve, Call, ConnConfig, Parked, ResponseHead, Service, DEFAULT_MAX_PARKED, PREFACE,
};
use crate::ws::Timed;

/// What one connection did.
#[derive(Debug)]
pub struct H2Run {
    /// Every byte the server wrote, in order.
    pub output: Vec<u8>,
    /// How `serve` ended (`Err` for an input that ends mid-frame or breaks the preface).
    pub result: io::Result<()>,
    /// Streams the service answered.
    pub streams: usize,
}

/// Serves `frames` (everything after the client preface) as one connection, in a fiber, and
/// returns what the server wrote; a stream waits at most `stall` for window or body.
pub fn h2_connection(frames: &[u8], stall: Duration) -> H2Run {
    let mut input = PREFACE.to_vec();
    input.extend_from_slice(frames);
    let output = Arc::new(Mutex::new(Vec::new()));
    let streams = Arc::new(Mutex::new(0usize));
    let (out, count) = (output.clone(), streams.clone());
    let result = moria_runtime::spawn(move || {
        // `serve` shuts a socket's sides to wake its fibers: give it a real one, unused.
        let (socket, _peer) = UnixStream::pair()?;
        let service = Answer { count };
        serve(
            &mut Input(io::Cursor::new(input)),
            Box::new(Sink(out)),
            &service,
            &ConnConfig {
                idle: stall,
                stall,
                parked: std::sync::Arc::new(Parked::new(DEFAULT_MAX_PARKED)),
            },
            &ShutdownToken::new(),
            &AtomicBool::new(false),
            socket.as_raw_fd(),
        )
    })
    .join()
    .unwrap_or_else(|_| Err(io::Error::other("the connection's fiber panicked")));
    let output = std::mem::take(&mut *output.lock().unwrap_or_else(PoisonError::into_inner));
    let streams = *streams.lock().unwrap_or_else(PoisonError::into_inner);
    H2Run {
        output,
        result,
        streams,
    }
}

/// The client's bytes, as the connection's reading side.
struct Input(io::Cursor<Vec<u8>>);

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl Timed for Input {
    fn set_read_timeout(&mut self, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }

    fn read_within(&mut self, buf: &mut [u8], _: Duration) -> io::Result<Option<usize>> {
        self.0.read(buf).map(Some)
    }
}

/// The server's writing half: appends to a shared buffer.
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut out = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Each stream: its body read to the end, then a short answer.
struct Answer {
    count: Arc<Mutex<usize>>,
}

impl Service for Answer {
    fn serve(&self, mut call: Call<'_>) {
        let mut sink = [0u8; 4096];
        while let Ok(n) = call.body.read(&mut sink) {
            if n == 0 {
                break;
            }
        }
        let head = ResponseHead {
            status: 200,
            lines: b"content-type: text/plain\r\n",
            length: Some(2),
        };
        if call.send.respond(&head, b"ok", true).is_ok() {
            *self.count.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        }
    }
}
