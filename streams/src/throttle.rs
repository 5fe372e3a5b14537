//! [`Throttle`]: a bandwidth limit in bytes per second on reads, writes or both.

use std::io::{self, Read, Write};
use std::time::Instant;

use crate::Pacer;

/// A stream wrapper that keeps the average rate of each direction under a limit.
///
/// Each call moves at most one [`Pacer::quantum`] (1/50 s of traffic), then sleeps with
/// `moria_runtime::sleep` (parking only the fiber) until the schedule allows the next: smooth at
/// any buffer size, with no minimum sleep. A rate of 0 is taken as 1 byte per second.
#[derive(Debug)]
pub struct Throttle<S> {
    inner: S,
    read: Option<Pacer>,
    write: Option<Pacer>,
}

impl<S> Throttle<S> {
    /// Limits reads and writes, each to `bytes_per_sec`.
    pub fn new(inner: S, bytes_per_sec: u64) -> Self {
        Throttle {
            inner,
            read: Some(Pacer::new(bytes_per_sec)),
            write: Some(Pacer::new(bytes_per_sec)),
        }
    }

    /// Limits reads only.
    pub fn reads(inner: S, bytes_per_sec: u64) -> Self {
        Throttle {
            inner,
            read: Some(Pacer::new(bytes_per_sec)),
            write: None,
        }
    }

    /// Limits writes only.
    pub fn writes(inner: S, bytes_per_sec: u64) -> Self {
        Throttle {
            inner,
            read: None,
            write: Some(Pacer::new(bytes_per_sec)),
        }
    }

    /// The inner stream.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// Gives back the inner stream.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

/// Runs one paced operation: clip to the quantum, run, record, sleep.
fn paced(
    pacer: Option<&mut Pacer>,
    len: usize,
    op: impl FnOnce(usize) -> io::Result<usize>,
) -> io::Result<usize> {
    let Some(pacer) = pacer.filter(|_| len > 0) else {
        return op(len);
    };
    let n = op(len.min(pacer.quantum()))?;
    let wait = pacer.record(n, Instant::now());
    if !wait.is_zero() {
        moria_runtime::sleep(wait);
    }
    Ok(n)
}

impl<S: Read> Read for Throttle<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let inner = &mut self.inner;
        paced(self.read.as_mut(), buf.len(), |n| inner.read(&mut buf[..n]))
    }
}

impl<S: Write> Write for Throttle<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let inner = &mut self.inner;
        paced(self.write.as_mut(), buf.len(), |n| inner.write(&buf[..n]))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn reads_take_at_least_the_time_the_rate_implies() {
        // 40 kB at 200 kB/s: 200 ms by the schedule; assert a generous lower bound only.
        let data = vec![1u8; 40_000];
        let start = Instant::now();
        let mut t = Throttle::reads(&data[..], 200_000);
        let mut out = Vec::new();
        t.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
        assert!(
            start.elapsed() >= Duration::from_millis(150),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn writes_are_cut_into_quanta() {
        let mut t = Throttle::writes(Vec::new(), 50_000);
        assert_eq!(t.write(&[0; 10_000]).unwrap(), 1000);
        assert_eq!(t.write(b"").unwrap(), 0);
    }

    #[test]
    fn unthrottled_direction_passes_through() {
        let mut t = Throttle::writes(&b"abc"[..], 1);
        let mut out = [0u8; 3];
        assert_eq!(t.read(&mut out).unwrap(), 3);
    }
}
