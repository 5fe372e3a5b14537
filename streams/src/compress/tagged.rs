//! Telling the inner stream's errors from the codec's: the inner stream is wrapped in
//! [`Tagged`], which remembers that its last call failed.

use std::io::{self, BufRead, Read, Write};

use super::Format;
use crate::Error;

/// A stream wrapper that records whether its last call returned an error.
#[derive(Debug)]
pub(super) struct Tagged<S> {
    pub(super) inner: S,
    pub(super) failed: bool,
}

impl<S> Tagged<S> {
    pub(super) fn new(inner: S) -> Self {
        Tagged {
            inner,
            failed: false,
        }
    }

    fn record<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        self.failed = result.is_err();
        result
    }
}

impl<S: Read> Read for Tagged<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let result = self.inner.read(buf);
        self.record(result)
    }
}

impl<S: BufRead> BufRead for Tagged<S> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.failed = false;
        match self.inner.fill_buf() {
            Ok(bytes) => Ok(bytes),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt)
    }
}

impl<S: Write> Write for Tagged<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = self.inner.write(buf);
        self.record(result)
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = self.inner.flush();
        self.record(result)
    }
}

/// Maps an error out of a flate2 decoder: the inner stream's own errors (and this crate's)
/// pass through, the codec's become `InvalidData` saying what was wrong.
pub(super) fn codec_error(format: Format, inner_failed: bool, err: io::Error) -> io::Error {
    if inner_failed || Error::from_io(&err).is_some() {
        return err;
    }
    let reason = match err.kind() {
        io::ErrorKind::UnexpectedEof => "stream truncated before its end".to_string(),
        io::ErrorKind::WriteZero => "data after the end of the stream".to_string(),
        _ => err.to_string(),
    };
    Error::CorruptCompressed {
        format: format.name(),
        reason,
    }
    .into()
}
