//! [`Notify`]: callbacks on EOF, error, flush and close of a stream (Mordor's NotifyStream).

use std::fmt;
use std::io::{self, BufRead, Read, Write};

type Hook = Box<dyn FnMut() + Send>;
type ErrorHook = Box<dyn FnMut(&io::Error) + Send>;

/// The callbacks; the close callback runs when they are dropped with the stream.
#[derive(Default)]
struct Hooks {
    eof: Option<Hook>,
    error: Option<ErrorHook>,
    flush: Option<Hook>,
    close: Option<Box<dyn FnOnce() + Send>>,
    eof_seen: bool,
}

impl Hooks {
    fn on_read(&mut self, result: &io::Result<usize>, asked: usize) {
        match result {
            Ok(0) if asked > 0 && !self.eof_seen => {
                self.eof_seen = true;
                if let Some(f) = self.eof.as_mut() {
                    f();
                }
            }
            Err(e) => self.on_error(e),
            Ok(_) => {}
        }
    }

    fn on_error(&mut self, err: &io::Error) {
        if let Some(f) = self.error.as_mut() {
            f(err);
        }
    }
}

impl Drop for Hooks {
    fn drop(&mut self) {
        if let Some(f) = self.close.take() {
            f();
        }
    }
}

/// A stream wrapper that calls back on EOF (once), on each error, on flush and on close.
///
/// "Close" is the end of the wrapper's life: drop or [`Notify::into_inner`]. The HTTP server uses
/// this to learn that a request body has been read to its end.
pub struct Notify<S> {
    inner: S,
    hooks: Hooks,
}

impl<S> Notify<S> {
    /// Wraps `inner` with no callbacks yet.
    pub fn new(inner: S) -> Self {
        Notify {
            inner,
            hooks: Hooks::default(),
        }
    }

    /// Calls `f` the first time a non-empty read returns 0.
    pub fn on_eof(mut self, f: impl FnMut() + Send + 'static) -> Self {
        self.hooks.eof = Some(Box::new(f));
        self
    }

    /// Calls `f` with every error the inner stream returns.
    pub fn on_error(mut self, f: impl FnMut(&io::Error) + Send + 'static) -> Self {
        self.hooks.error = Some(Box::new(f));
        self
    }

    /// Calls `f` after each successful flush.
    pub fn on_flush(mut self, f: impl FnMut() + Send + 'static) -> Self {
        self.hooks.flush = Some(Box::new(f));
        self
    }

    /// Calls `f` once, when the wrapper is dropped or unwrapped.
    pub fn on_close(mut self, f: impl FnOnce() + Send + 'static) -> Self {
        self.hooks.close = Some(Box::new(f));
        self
    }

    /// The inner stream.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// Gives back the inner stream, running the close callback.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S> fmt::Debug for Notify<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notify")
            .field("eof_seen", &self.hooks.eof_seen)
            .finish_non_exhaustive()
    }
}

impl<S: Read> Read for Notify<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let result = self.inner.read(buf);
        self.hooks.on_read(&result, buf.len());
        result
    }
}

impl<S: BufRead> BufRead for Notify<S> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let hooks = &mut self.hooks;
        match self.inner.fill_buf() {
            Ok(bytes) => {
                hooks.on_read(&Ok(bytes.len()), 1);
                Ok(bytes)
            }
            Err(e) => {
                hooks.on_error(&e);
                Err(e)
            }
        }
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt)
    }
}

impl<S: Write> Write for Notify<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = self.inner.write(buf);
        if let Err(e) = &result {
            self.hooks.on_error(e);
        }
        result
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.inner.flush() {
            Ok(()) => {
                if let Some(f) = self.hooks.flush.as_mut() {
                    f();
                }
                Ok(())
            }
            Err(e) => {
                self.hooks.on_error(&e);
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn counter() -> (Arc<AtomicUsize>, impl FnMut() + Send + 'static) {
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        (count, move || {
            c.fetch_add(1, Ordering::SeqCst);
        })
    }

    #[test]
    fn eof_fires_once_and_close_fires_on_drop() {
        let (eofs, on_eof) = counter();
        let (closes, on_close) = counter();
        let mut n = Notify::new(&b"abc"[..]).on_eof(on_eof).on_close(on_close);
        let mut out = Vec::new();
        n.read_to_end(&mut out).unwrap();
        assert_eq!(n.read(&mut [0; 4]).unwrap(), 0);
        assert_eq!(n.read(&mut []).unwrap(), 0);
        assert_eq!(eofs.load(Ordering::SeqCst), 1);
        assert_eq!(closes.load(Ordering::SeqCst), 0);
        drop(n);
        assert_eq!(closes.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn zero_length_read_is_not_eof() {
        let (eofs, on_eof) = counter();
        let mut n = Notify::new(&b"abc"[..]).on_eof(on_eof);
        assert_eq!(n.read(&mut []).unwrap(), 0);
        assert_eq!(eofs.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn bufread_eof_and_errors_and_flushes() {
        let (eofs, on_eof) = counter();
        let mut n = Notify::new(io::Cursor::new(b"x\n".to_vec())).on_eof(on_eof);
        let mut line = String::new();
        n.read_line(&mut line).unwrap();
        n.read_line(&mut line).unwrap();
        assert_eq!(eofs.load(Ordering::SeqCst), 1);

        let (errors, mut on_error) = counter();
        let (flushes, on_flush) = counter();
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut w = Notify::new(Broken)
            .on_error(move |_| on_error())
            .on_flush(on_flush);
        assert!(w.write_all(b"ab").is_err());
        w.flush().unwrap();
        assert_eq!(errors.load(Ordering::SeqCst), 1);
        assert_eq!(flushes.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn into_inner_closes() {
        let (closes, on_close) = counter();
        let n = Notify::new(io::empty()).on_close(on_close);
        let _inner = n.into_inner();
        assert_eq!(closes.load(Ordering::SeqCst), 1);
    }
}
