//! Whole directories as a streamed `.tar` or `.tar.gz` (`?download=tar` / `?download=tar.gz`
//! on a directory's URL): walked with one descriptor per level and one directory's names at a
//! time, written straight to the connection — no temporary file, memory flat in the tree's
//! size. Long names use GNU long-name entries (the `tar` crate).
//!
//! The walk never follows a symlink (each name is opened relative to its parent's descriptor
//! with `O_NOFOLLOW`), skips hidden names unless hidden files are served, and stores regular
//! files and directories only. A file that changes size while it is sent keeps the size its
//! header announced (cut, or padded with zeros), so the archive stays readable.

use std::ffi::{CString, OsStr};
use std::fs;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use flate2::write::GzEncoder;
use moria_runtime::blocking_io;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};

use super::open::{OpenError, Root};
use super::path::{self, Rejection};
use super::Settings;
use crate::method::Method;
use crate::request::Request;
use crate::response::{respond_error, Body, Response};

/// The query parameter asking for an archive.
pub(crate) const QUERY: &str = "download";
/// Output buffer between the archive writer and the connection.
const OUT_BUFFER: usize = 64 * 1024;
/// Read buffer per file.
const READ_BUFFER: usize = 256 * 1024;
/// Deepest directory level walked (deeper ones are left out, with a log line).
const MAX_DEPTH: usize = 128;

/// The archive formats offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Tar,
    TarGz,
}

impl Format {
    /// The format a request asks for, if any (`?download=tar` or `?download=tar.gz`).
    pub(crate) fn requested(req: &Request<'_>) -> Option<Format> {
        match req.query_param(QUERY)?.as_ref() {
            "tar" => Some(Format::Tar),
            "tar.gz" | "tgz" => Some(Format::TarGz),
            _ => None,
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Format::Tar => "tar",
            Format::TarGz => "tar.gz",
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Format::Tar => "application/x-tar",
            Format::TarGz => "application/gzip",
        }
    }
}

/// Answers a GET or HEAD for the archive of the directory the request names.
pub(crate) fn respond(
    root: &Root,
    s: &Settings,
    format: Format,
    req: &Request<'_>,
    res: &mut Response,
) -> io::Result<()> {
    if !matches!(req.method(), Method::Get | Method::Head) {
        respond_error(res, 405);
        res.header("Allow", "GET, HEAD");
        return Ok(());
    }
    let refused = match path::validate(req.path(), &s.prefix, s.hidden) {
        Ok(r) if r.trailing_slash || r.rel.is_empty() => Ok(r.rel),
        Ok(_) | Err(Rejection::OutsidePrefix) => Err(404),
        Err(Rejection::Malformed) => Err(400),
        Err(Rejection::Hidden) => Err(403),
    };
    let opened = refused.map(|rel| (root.open_dir(&rel, s.symlinks_out), rel));
    let (dir, rel) = match opened {
        Ok((Ok(dir), rel)) => (dir, rel),
        Ok((Err(OpenError::Io(e)), _)) => return Err(e),
        refused => {
            let code = match refused {
                Ok((Err(OpenError::Forbidden), _)) => 403,
                Err(code) => code,
                _ => 404,
            };
            respond_error(res, code);
            return Ok(());
        }
    };
    let base = match rel.rsplit('/').next().filter(|n| !n.is_empty()) {
        Some(n) => n.to_string(),
        None => root
            .path()
            .file_name()
            .map_or_else(|| "files".into(), |n| n.to_string_lossy().into_owned()),
    };
    let filename = format!("{base}.{}", format.extension());
    res.status(200)
        .content_type(format.content_type())
        .header("Content-Disposition", disposition(&filename));
    let hidden = s.hidden;
    res.body(Body::stream(move |w| {
        write_archive(Arc::new(dir), base.as_bytes(), hidden, format, w)
    }));
    Ok(())
}

/// `attachment` with an ASCII fallback name and the exact name as RFC 8187 `filename*`.
fn disposition(filename: &str) -> String {
    let ascii: String = filename
        .chars()
        .map(|c| match c {
            ' '..='~' if c != '"' && c != '\\' => c,
            _ => '_',
        })
        .collect();
    let mut exact = String::new();
    super::path::encode_component_into(filename, &mut exact);
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{exact}")
}

/// Writes the archive of `dir` (its entries under `base/`) to `w`.
fn write_archive(
    dir: Arc<fs::File>,
    base: &[u8],
    hidden: bool,
    format: Format,
    w: &mut dyn Write,
) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(OUT_BUFFER, w);
    match format {
        Format::Tar => {
            let mut tar = tar::Builder::new(&mut out);
            walk(&mut tar, dir, base, hidden)?;
            tar.finish()?;
        }
        Format::TarGz => {
            let gz = GzipOnPool::new(&mut out)?;
            let mut tar = tar::Builder::new(gz);
            walk(&mut tar, dir, base, hidden)?;
            tar.into_inner()?.finish()?;
        }
    }
    out.flush()
}

/// Bytes of tar gathered before one compression step on the offload pool.
const GZIP_CHUNK: usize = 256 * 1024;

/// gzip whose encoder lives and runs on the offload pool (its state is too large for a fiber
/// stack in debug builds; see `compress.rs`); the compressed bytes are written here.
struct GzipOnPool<'w, W: Write> {
    encoder: Option<GzEncoder<Vec<u8>>>,
    input: Vec<u8>,
    out: &'w mut W,
}

impl<'w, W: Write> GzipOnPool<'w, W> {
    fn new(out: &'w mut W) -> io::Result<Self> {
        let encoder =
            blocking_io(|| Ok(GzEncoder::new(Vec::new(), flate2::Compression::default())))?;
        Ok(GzipOnPool {
            encoder: Some(encoder),
            input: Vec::with_capacity(GZIP_CHUNK),
            out,
        })
    }

    /// Compresses what was gathered (and ends the stream when `last`), then writes it out.
    fn step(&mut self, last: bool) -> io::Result<()> {
        let mut encoder = self
            .encoder
            .take()
            .ok_or_else(|| io::Error::other("gzip encoder lost after a failure"))?;
        let mut input = std::mem::take(&mut self.input);
        let (encoder, input, output) = blocking_io(move || {
            encoder.write_all(&input)?;
            input.clear();
            if last {
                encoder.try_finish()?;
            }
            let output = std::mem::take(encoder.get_mut());
            Ok((encoder, input, output))
        })?;
        self.encoder = Some(encoder);
        self.input = input;
        self.out.write_all(&output)
    }

    /// Ends the gzip stream.
    fn finish(mut self) -> io::Result<()> {
        self.step(true)
    }
}

impl<W: Write> Drop for GzipOnPool<'_, W> {
    /// An unfinished encoder compresses what it holds when dropped: that runs on the pool too.
    fn drop(&mut self) {
        if let Some(encoder) = self.encoder.take() {
            let _ = blocking_io(move || {
                drop(encoder);
                Ok(())
            });
        }
    }
}

impl<W: Write> Write for GzipOnPool<'_, W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.input.extend_from_slice(data);
        if self.input.len() >= GZIP_CHUNK {
            self.step(false)?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One name in a directory, with what the archive needs of its metadata.
struct Item {
    name: CString,
    is_dir: bool,
    size: u64,
    mode: u32,
    mtime: u64,
}

/// One level of the walk: the directory, its path in the archive, its names still to write.
struct Level {
    dir: Arc<fs::File>,
    path: Vec<u8>,
    items: std::vec::IntoIter<Item>,
}

/// Writes `base/` and everything under it, depth first.
fn walk<W: Write>(
    tar: &mut tar::Builder<W>,
    dir: Arc<fs::File>,
    base: &[u8],
    hidden: bool,
) -> io::Result<()> {
    append_dir(tar, base, 0o755, 0)?;
    let items = read_items(Arc::clone(&dir), hidden)?;
    let mut stack = vec![Level {
        dir,
        path: base.to_vec(),
        items: items.into_iter(),
    }];
    while let Some(level) = stack.last_mut() {
        let Some(item) = level.items.next() else {
            stack.pop();
            continue;
        };
        let path = [&level.path[..], b"/", item.name.as_bytes()].concat();
        let parent = Arc::clone(&level.dir);
        if item.is_dir {
            if stack.len() >= MAX_DEPTH {
                log::warn!("archive: deeper than {MAX_DEPTH} levels, left out");
                continue;
            }
            let Ok(sub) = open_at(parent, item.name, OFlags::DIRECTORY) else {
                continue;
            };
            let sub = Arc::new(sub);
            append_dir(tar, &path, item.mode, item.mtime)?;
            let items = read_items(Arc::clone(&sub), hidden)?;
            stack.push(Level {
                dir: sub,
                path,
                items: items.into_iter(),
            });
        } else {
            let Ok(file) = open_at(parent, item.name, OFlags::empty()) else {
                continue;
            };
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Regular);
            header.set_size(item.size);
            header.set_mode(item.mode);
            header.set_mtime(item.mtime);
            let file = moria_streams::File::from_std(file);
            let body = Exactly {
                inner: BufReader::with_capacity(READ_BUFFER, file).take(item.size),
                left: item.size,
            };
            tar.append_data(&mut header, OsStr::from_bytes(&path), body)?;
        }
    }
    Ok(())
}

/// Writes a directory entry.
fn append_dir<W: Write>(
    tar: &mut tar::Builder<W>,
    path: &[u8],
    mode: u32,
    mtime: u64,
) -> io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Directory);
    header.set_size(0);
    header.set_mode(mode);
    header.set_mtime(mtime);
    let path = [path, b"/"].concat();
    tar.append_data(&mut header, OsStr::from_bytes(&path), io::empty())
}

/// Opens `name` in `dir` without following a symlink (on the offload pool).
fn open_at(dir: Arc<fs::File>, name: CString, extra: OFlags) -> io::Result<fs::File> {
    blocking_io(move || {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | extra;
        Ok(fs::File::from(rustix::fs::openat(
            &*dir,
            name.as_c_str(),
            flags,
            Mode::empty(),
        )?))
    })
}

/// The regular files and directories in `dir`, sorted by name (on the offload pool).
fn read_items(dir: Arc<fs::File>, hidden: bool) -> io::Result<Vec<Item>> {
    blocking_io(move || {
        let mut items = Vec::new();
        for entry in Dir::read_from(&*dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let bytes = name.to_bytes();
            if bytes == b"." || bytes == b".." || (bytes.starts_with(b".") && !hidden) {
                continue;
            }
            let Ok(st) = rustix::fs::statat(&*dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            let is_dir = match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => true,
                FileType::RegularFile => false,
                _ => continue,
            };
            items.push(Item {
                name: name.to_owned(),
                is_dir,
                size: u64::try_from(st.st_size).unwrap_or(0),
                mode: st.st_mode & 0o7777,
                mtime: u64::try_from(st.st_mtime).unwrap_or(0),
            });
        }
        items.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(items)
    })
}

/// Exactly `left` bytes: the inner reader's, then zeros if it ends early.
struct Exactly<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Exactly<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let want = out
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        if want == 0 {
            return Ok(0);
        }
        let n = match self.inner.read(&mut out[..want])? {
            0 => {
                out[..want].fill(0);
                want
            }
            n => n,
        };
        self.left -= n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_shrank_is_padded_and_one_that_grew_is_cut() {
        let mut out = Vec::new();
        Exactly {
            inner: &b"abc"[..],
            left: 5,
        }
        .read_to_end(&mut out)
        .unwrap();
        assert_eq!(out, b"abc\0\0");
        let mut out = Vec::new();
        Exactly {
            inner: (&b"abcdef"[..]).take(2),
            left: 2,
        }
        .read_to_end(&mut out)
        .unwrap();
        assert_eq!(out, b"ab");
    }

    #[test]
    fn disposition_has_an_ascii_fallback_and_the_exact_name() {
        assert_eq!(
            disposition("é \"x\".tar"),
            "attachment; filename=\"_ _x_.tar\"; filename*=UTF-8''%C3%A9%20%22x%22.tar"
        );
    }
}
