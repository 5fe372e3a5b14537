//! [`File`]: a file whose every syscall runs on the runtime's offload pool.
//!
//! A slow disk then parks only the calling fiber; the worker goes on serving its sockets.
//! Each call is one `blocking_io` job, so sequential reads fetch a large chunk per job
//! ([`DEFAULT_READ_CHUNK`]) and serve smaller reads from it.
//!
//! The handle is a state enum in the manner of tokio's `fs::File`: `Idle` (the OS position is
//! the logical one) or `ReadAhead` (bytes fetched but not yet returned; the OS position is past
//! them). Every operation that needs the OS position first gives the read-ahead back with a
//! seek, and every error leaves one of these two valid states.

mod options;

use std::fs;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::mem::ManuallyDrop;
use std::os::unix::fs::FileExt;
use std::os::unix::io::{AsRawFd, RawFd};
use std::path::Path;
use std::sync::Arc;

use moria_runtime::blocking_io;

pub use options::OpenOptions;

/// Bytes fetched per offloaded read unless the caller asks for more (see the streams bench).
pub const DEFAULT_READ_CHUNK: usize = 256 * 1024;
/// Smallest read chunk accepted by [`File::set_read_chunk`].
pub const MIN_READ_CHUNK: usize = 4 * 1024;
/// Largest read chunk, and the most one read or write call moves in one job.
pub const MAX_CHUNK: usize = 16 * 1024 * 1024;

/// Where the handle is; see the module docs. The vector is a scratch buffer kept between
/// calls: its length is how much of it is initialised, so it is zeroed only when it grows.
#[derive(Debug)]
enum State {
    /// The OS position is the logical position.
    Idle(Vec<u8>),
    /// `buf[pos..end]` is read ahead: the logical position is the OS position minus its length.
    ReadAhead {
        buf: Vec<u8>,
        pos: usize,
        end: usize,
    },
}

/// A file on disk whose syscalls all run on the offload pool; `Read + Write + Seek`.
#[derive(Debug)]
pub struct File {
    std: ManuallyDrop<Arc<fs::File>>,
    state: State,
    read_chunk: usize,
}

impl File {
    /// Opens `path` read-only.
    pub fn open(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new().read(true).open(path)
    }

    /// Creates (or truncates) `path` for writing.
    pub fn create(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
    }

    /// Options to open a file with.
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

    /// Wraps an open std file.
    pub fn from_std(std: fs::File) -> File {
        File {
            std: ManuallyDrop::new(Arc::new(std)),
            state: State::Idle(Vec::new()),
            read_chunk: DEFAULT_READ_CHUNK,
        }
    }

    /// Sets how many bytes one offloaded read fetches (clamped to
    /// [`MIN_READ_CHUNK`]..=[`MAX_CHUNK`]; default [`DEFAULT_READ_CHUNK`]).
    pub fn set_read_chunk(&mut self, bytes: usize) {
        self.read_chunk = bytes.clamp(MIN_READ_CHUNK, MAX_CHUNK);
    }

    /// The file's metadata.
    pub fn metadata(&self) -> io::Result<fs::Metadata> {
        let std = Arc::clone(&self.std);
        blocking_io(move || std.metadata())
    }

    /// The file's size in bytes.
    pub fn size(&self) -> io::Result<u64> {
        self.metadata().map(|m| m.len())
    }

    /// Truncates or extends the file to `size` bytes (the position does not move).
    pub fn set_len(&mut self, size: u64) -> io::Result<()> {
        self.give_back_read_ahead()?;
        let std = Arc::clone(&self.std);
        blocking_io(move || std.set_len(size))
    }

    /// Flushes data and metadata to the disk.
    pub fn sync_all(&self) -> io::Result<()> {
        let std = Arc::clone(&self.std);
        blocking_io(move || std.sync_all())
    }

    /// Flushes data (and the metadata needed to read it back) to the disk.
    pub fn sync_data(&self) -> io::Result<()> {
        let std = Arc::clone(&self.std);
        blocking_io(move || std.sync_data())
    }

    /// Reads at `offset` without moving the position; returns the bytes read (0 at EOF).
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let std = Arc::clone(&self.std);
        let len = buf.len().min(MAX_CHUNK);
        let data = blocking_io(move || {
            let mut data = vec![0u8; len];
            let n = retry(|| std.read_at(&mut data, offset))?;
            data.truncate(n);
            Ok(data)
        })?;
        buf[..data.len()].copy_from_slice(&data);
        Ok(data.len())
    }

    /// Writes all of `buf` at `offset` without moving the position.
    pub fn write_all_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.give_back_read_ahead()?;
        for (i, piece) in buf.chunks(MAX_CHUNK).enumerate() {
            let std = Arc::clone(&self.std);
            let piece = piece.to_vec();
            let at = offset + (i * MAX_CHUNK) as u64;
            blocking_io(move || std.write_all_at(&piece, at))?;
        }
        Ok(())
    }

    /// The std file, shared with jobs in flight (for zero-copy transfer). Call
    /// [`File::give_back_read_ahead`] first so the OS position is the logical one.
    pub(crate) fn shared(&self) -> &Arc<fs::File> {
        &self.std
    }

    /// Seeks back over read-ahead bytes so the OS position is the logical position.
    pub(crate) fn give_back_read_ahead(&mut self) -> io::Result<()> {
        let unread = match &self.state {
            State::Idle(_) => return Ok(()),
            State::ReadAhead { pos, end, .. } => end - pos,
        };
        if unread > 0 {
            let std = Arc::clone(&self.std);
            blocking_io(move || (&*std).seek(SeekFrom::Current(-(unread as i64))))?;
        }
        self.state = State::Idle(self.take_buf());
        Ok(())
    }

    /// The scratch buffer out of the state, leaving an empty `Idle`.
    fn take_buf(&mut self) -> Vec<u8> {
        match std::mem::replace(&mut self.state, State::Idle(Vec::new())) {
            State::Idle(buf) | State::ReadAhead { buf, .. } => buf,
        }
    }
}

/// Runs `op` again while it is interrupted by a signal.
fn retry<T>(mut op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match op() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

impl Read for File {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if let State::ReadAhead {
            buf: data,
            pos,
            end,
        } = &mut self.state
        {
            let n = buf.len().min(*end - *pos);
            buf[..n].copy_from_slice(&data[*pos..*pos + n]);
            *pos += n;
            if *pos == *end {
                let scratch = self.take_buf();
                self.state = State::Idle(scratch);
            }
            return Ok(n);
        }
        let want = buf.len().max(self.read_chunk).min(MAX_CHUNK);
        let mut data = self.take_buf();
        if data.len() < want {
            data.resize(want, 0);
        }
        let std = Arc::clone(&self.std);
        let (data, got) = blocking_io(move || {
            let got = retry(|| (&*std).read(&mut data[..want]))?;
            Ok((data, got))
        })?;
        let n = buf.len().min(got);
        buf[..n].copy_from_slice(&data[..n]);
        self.state = if n < got {
            State::ReadAhead {
                buf: data,
                pos: n,
                end: got,
            }
        } else {
            State::Idle(data)
        };
        Ok(n)
    }
}

impl Write for File {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.give_back_read_ahead()?;
        let n = buf.len().min(MAX_CHUNK);
        let mut data = self.take_buf();
        data.clear();
        data.extend_from_slice(&buf[..n]);
        let std = Arc::clone(&self.std);
        let data = blocking_io(move || {
            (&*std).write_all(&data)?;
            Ok(data)
        })?;
        self.state = State::Idle(data);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for File {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let pos = match (pos, &self.state) {
            (SeekFrom::Current(off), State::ReadAhead { pos, end, .. }) => {
                let unread = i64::try_from(end - pos).unwrap_or(i64::MAX);
                let off = off.checked_sub(unread).ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidInput, "seek offset out of range")
                })?;
                SeekFrom::Current(off)
            }
            (pos, _) => pos,
        };
        let std = Arc::clone(&self.std);
        let new = blocking_io(move || (&*std).seek(pos))?;
        let spare = self.take_buf();
        self.state = State::Idle(spare);
        Ok(new)
    }
}

impl AsRawFd for File {
    fn as_raw_fd(&self) -> RawFd {
        self.std.as_raw_fd()
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // SAFETY: `drop` runs once and `self.std` is not used after it is taken here.
        let std = unsafe { ManuallyDrop::take(&mut self.std) };
        // close(2) may block too (network file systems): the last handle closes on the pool.
        let _ = moria_runtime::blocking(move || drop(std));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path in a fresh temporary directory (kept alive by the returned guard).
    fn temp_path(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        (dir, path)
    }

    fn sample(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[test]
    fn write_then_read_back_in_small_pieces() {
        let (_dir, path) = temp_path("small-pieces");
        let data = sample(700_000);
        let mut f = File::create(&path).unwrap();
        for piece in data.chunks(10_000) {
            f.write_all(piece).unwrap();
        }
        drop(f);
        let mut f = File::open(&path).unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 1000];
        loop {
            let n = f.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        assert_eq!(out, data);
        assert_eq!(f.size().unwrap(), 700_000);
    }

    #[test]
    fn seek_current_accounts_for_read_ahead() {
        let (_dir, path) = temp_path("seek-current");
        let data = sample(100_000);
        fs::write(&path, &data).unwrap();
        let mut f = File::open(&path).unwrap();
        let mut buf = [0u8; 10];
        f.read_exact(&mut buf).unwrap();
        assert_eq!(f.stream_position().unwrap(), 10);
        assert_eq!(f.seek(SeekFrom::Current(5)).unwrap(), 15);
        f.read_exact(&mut buf).unwrap();
        assert_eq!(buf, data[15..25]);
        assert_eq!(f.seek(SeekFrom::End(-3)).unwrap(), 99_997);
        let mut tail = Vec::new();
        f.read_to_end(&mut tail).unwrap();
        assert_eq!(tail, data[99_997..]);
    }

    #[test]
    fn write_after_read_lands_at_the_logical_position() {
        let (_dir, path) = temp_path("write-after-read");
        fs::write(&path, sample(50_000)).unwrap();
        let mut f = File::options().read(true).write(true).open(&path).unwrap();
        let mut buf = [0u8; 4];
        f.read_exact(&mut buf).unwrap();
        f.write_all(b"XYZ").unwrap();
        drop(f);
        let back = fs::read(&path).unwrap();
        assert_eq!(&back[4..7], b"XYZ");
        assert_eq!(back.len(), 50_000);
    }

    #[test]
    fn positional_io_leaves_the_position_alone() {
        let (_dir, path) = temp_path("positional");
        let mut f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        f.write_all(b"0123456789").unwrap();
        f.write_all_at(b"ab", 2).unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(f.read_at(&mut buf, 1).unwrap(), 4);
        assert_eq!(&buf, b"1ab4");
        assert_eq!(f.read_at(&mut buf, 100).unwrap(), 0);
        assert_eq!(f.stream_position().unwrap(), 10);
    }

    #[test]
    fn truncate_sync_and_metadata() {
        let (_dir, path) = temp_path("truncate");
        let mut f = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        f.write_all(&sample(5000)).unwrap();
        f.set_len(100).unwrap();
        f.sync_all().unwrap();
        f.sync_data().unwrap();
        assert_eq!(f.metadata().unwrap().len(), 100);
        f.seek(SeekFrom::Start(0)).unwrap();
        let mut out = Vec::new();
        f.read_to_end(&mut out).unwrap();
        assert_eq!(out, sample(5000)[..100]);
    }

    #[test]
    fn missing_file_is_not_found_and_zero_length_read_is_a_no_op() {
        let (_missing, missing) = temp_path("does-not-exist");
        let err = File::open(missing).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        let (_dir, path) = temp_path("empty");
        fs::write(&path, b"").unwrap();
        let mut f = File::open(&path).unwrap();
        assert_eq!(f.read(&mut []).unwrap(), 0);
        assert_eq!(f.read(&mut [0; 8]).unwrap(), 0);
    }

    #[test]
    fn read_chunk_is_clamped() {
        let (_dir, path) = temp_path("chunk");
        fs::write(&path, b"x").unwrap();
        let mut f = File::open(&path).unwrap();
        f.set_read_chunk(1);
        assert_eq!(f.read_chunk, MIN_READ_CHUNK);
        f.set_read_chunk(usize::MAX);
        assert_eq!(f.read_chunk, MAX_CHUNK);
    }
}
