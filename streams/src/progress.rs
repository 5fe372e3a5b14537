//! [`Progress`]: a callback every N bytes read or written (Mordor's ProgressStream).

use std::io::{self, Read, Write};

/// Totals passed to a progress callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// Bytes read so far.
    pub read: u64,
    /// Bytes written so far.
    pub written: u64,
    /// Whether a read has returned EOF.
    pub eof: bool,
}

/// A stream wrapper that calls `f` with the totals each time another `every` bytes have gone
/// through it in either direction, and once at EOF.
#[derive(Debug)]
pub struct Progress<S, F> {
    inner: S,
    every: u64,
    totals: Totals,
    since_report: u64,
    f: F,
}

impl<S, F: FnMut(Totals)> Progress<S, F> {
    /// Reports through `f` every `every` bytes (0 is taken as 1).
    pub fn new(inner: S, every: u64, f: F) -> Self {
        Progress {
            inner,
            every: every.max(1),
            totals: Totals::default(),
            since_report: 0,
            f,
        }
    }

    /// The totals so far.
    pub fn totals(&self) -> Totals {
        self.totals
    }

    /// Gives back the inner stream.
    pub fn into_inner(self) -> S {
        self.inner
    }

    fn advance(&mut self, n: usize) {
        self.since_report += n as u64;
        if self.since_report >= self.every {
            self.since_report %= self.every;
            (self.f)(self.totals);
        }
    }
}

impl<S: Read, F: FnMut(Totals)> Read for Progress<S, F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() && !self.totals.eof {
            self.totals.eof = true;
            (self.f)(self.totals);
        }
        self.totals.read += n as u64;
        self.advance(n);
        Ok(n)
    }
}

impl<S: Write, F: FnMut(Totals)> Write for Progress<S, F> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.totals.written += n as u64;
        self.advance(n);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_every_n_bytes_and_at_eof() {
        let data = vec![7u8; 1000];
        let mut reports = Vec::new();
        let mut p = Progress::new(&data[..], 300, |t| reports.push(t));
        let mut buf = [0u8; 100];
        while p.read(&mut buf).unwrap() > 0 {}
        p.into_inner();
        let reads: Vec<u64> = reports.iter().map(|t| t.read).collect();
        assert_eq!(reads, vec![300, 600, 900, 1000]);
        assert!(reports.last().unwrap().eof);
    }

    #[test]
    fn big_writes_report_once_per_call() {
        let mut count = 0;
        let mut p = Progress::new(Vec::new(), 10, |_| count += 1);
        p.write_all(&[0; 35]).unwrap();
        p.write_all(&[0; 5]).unwrap();
        assert_eq!(p.totals().written, 40);
        p.into_inner();
        assert_eq!(count, 2);
    }
}
