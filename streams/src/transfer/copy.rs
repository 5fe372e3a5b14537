//! [`transfer`]: the buffered copy that works for any reader and writer.

use std::io::{self, Read, Write};

use super::stats::BUFFERED;

/// Size of the buffer of a buffered transfer.
pub const TRANSFER_BUFFER: usize = 64 * 1024;

/// Copies from `reader` to `writer` until EOF or `limit` bytes, through one buffer reused for
/// the whole copy; returns the bytes moved (fewer than `limit` means the reader ended first).
pub fn transfer<R, W>(reader: &mut R, writer: &mut W, limit: Option<u64>) -> io::Result<u64>
where
    R: Read + ?Sized,
    W: Write + ?Sized,
{
    BUFFERED.begin();
    let mut buf = vec![0u8; TRANSFER_BUFFER];
    let mut moved = 0u64;
    loop {
        let want = chunk(limit, moved, buf.len());
        if want == 0 {
            return Ok(moved);
        }
        let n = match reader.read(&mut buf[..want]) {
            Ok(0) => return Ok(moved),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        writer.write_all(&buf[..n])?;
        BUFFERED.moved(n);
        moved += n as u64;
    }
}

/// The next piece to move: at most `max`, and no more than the limit leaves.
pub(crate) fn chunk(limit: Option<u64>, moved: u64, max: usize) -> usize {
    match limit {
        None => max,
        Some(limit) => usize::try_from(limit - moved).map_or(max, |left| left.min(max)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_everything_without_a_limit() {
        let data = vec![5u8; 200_000];
        let mut out = Vec::new();
        assert_eq!(transfer(&mut &data[..], &mut out, None).unwrap(), 200_000);
        assert_eq!(out, data);
    }

    #[test]
    fn stops_at_the_limit_and_leaves_the_rest() {
        let data = vec![5u8; 200_000];
        let mut input = &data[..];
        let mut out = Vec::new();
        assert_eq!(
            transfer(&mut input, &mut out, Some(70_000)).unwrap(),
            70_000
        );
        assert_eq!(input.len(), 130_000);
        assert_eq!(transfer(&mut input, &mut out, Some(0)).unwrap(), 0);
    }

    #[test]
    fn short_source_returns_what_it_had() {
        let mut out = Vec::new();
        assert_eq!(transfer(&mut &b"abc"[..], &mut out, Some(10)).unwrap(), 3);
    }

    #[test]
    fn writer_errors_stop_the_copy() {
        let mut room = [0u8; 10];
        let err = transfer(&mut &[1u8; 100][..], &mut &mut room[..], None).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WriteZero);
    }
}
