//! Uploads into the served tree: `POST` of `multipart/form-data` to a directory's URL (each
//! file part stored there; a `mkdir` field makes a subdirectory) and `PUT` of one file to its
//! URL. Each file is streamed to a hidden temporary file in its target directory and renamed
//! into place only when complete, so a cut-off upload leaves nothing.
//!
//! The target directory is opened through [`Root`] like every read (the same path rules and
//! kernel confinement); the file name is then one validated segment used only relative to that
//! directory's descriptor, so no name can lead out of it.

use std::fs;
use std::io::{self, Read, Write};
use std::sync::Arc;

use moria_runtime::blocking_io;
use rustix::fs::{Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use super::open::{OpenError, Root};
use super::path::{self, Rejection};
use super::Settings;
use crate::method::Method;
use crate::multipart::{self, Multipart, MultipartLimits, Violation};
use crate::request::Request;
use crate::response::{respond_error, Response};

/// Bytes written to disk per call on the offload pool.
const WRITE_CHUNK: usize = 256 * 1024;
/// Longest file name accepted (Linux `NAME_MAX`).
const MAX_NAME: usize = 255;
/// Prefix of the temporary files (hidden, so never listed unless hidden files are on).
const TEMP_PREFIX: &str = ".moria-upload-";
/// The form field asking for a new subdirectory.
const MKDIR_FIELD: &str = "mkdir";

/// What uploads may do; see [`StaticFilesBuilder::uploads`](super::StaticFilesBuilder::uploads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uploads {
    /// Largest file accepted, in bytes (413 beyond).
    pub max_file_bytes: u64,
    /// Whether an upload may replace an existing file (otherwise 409).
    pub overwrite: bool,
    /// Whether a `mkdir` form field may create a subdirectory.
    pub mkdir: bool,
}

impl Default for Uploads {
    /// 1 GiB files, no overwrite, no mkdir.
    fn default() -> Self {
        Uploads {
            max_file_bytes: 1 << 30,
            overwrite: false,
            mkdir: false,
        }
    }
}

/// Why an upload was refused, with the status that says so.
struct Refusal(u16, String);

impl Refusal {
    fn new(status: u16, why: impl Into<String>) -> Refusal {
        Refusal(status, why.into())
    }
}

impl From<OpenError> for Refusal {
    fn from(e: OpenError) -> Refusal {
        match e {
            OpenError::NotFound => Refusal::new(404, "no such directory"),
            OpenError::Forbidden => Refusal::new(403, "forbidden"),
            OpenError::Io(e) => from_disk(e),
        }
    }
}

/// A failure on the disk side.
fn from_disk(e: io::Error) -> Refusal {
    match e.raw_os_error().map(Errno::from_raw_os_error) {
        Some(Errno::EXIST | Errno::ISDIR | Errno::NOTEMPTY) => {
            Refusal::new(409, "a file or directory of that name exists")
        }
        Some(Errno::NOSPC | Errno::DQUOT) => Refusal::new(507, "no space left"),
        Some(Errno::ACCESS | Errno::PERM | Errno::ROFS) => {
            Refusal::new(403, "the directory is not writable")
        }
        _ => {
            log::warn!("upload: {e}");
            Refusal::new(500, "could not store the file")
        }
    }
}

/// A failure on the request side: a broken multipart rule, or a body that ended early.
fn from_body(e: io::Error) -> Refusal {
    match Violation::of(&e) {
        Some(v) => Refusal::new(v.status(), v.rule()),
        None => Refusal::new(400, format!("request body ended early: {e}")),
    }
}

/// Handles a POST or PUT under `root`.
pub(crate) fn handle(
    root: &Root,
    s: &Settings,
    up: &Uploads,
    req: &mut Request<'_>,
    res: &mut Response,
) {
    let outcome = match req.method() {
        Method::Put => put(root, s, up, req),
        _ => post(root, s, up, req),
    };
    match outcome {
        Ok(Stored { status, text }) => {
            let html = req
                .header("accept")
                .is_some_and(|a| a.windows(9).any(|w| w == b"text/html"));
            if html && req.method() == Method::Post {
                // A form posted without script: back to the listing.
                res.status(303).header("Location", req.target());
            } else {
                res.status(status);
            }
            res.content_type("text/plain; charset=utf-8").body(text);
        }
        Err(Refusal(status, why)) => {
            log::info!("upload to {} refused: {status} {why}", req.path());
            respond_error(res, status);
            res.body(format!("{status} {why}\n"));
        }
    }
}

/// What a successful upload answers.
struct Stored {
    status: u16,
    text: String,
}

/// The directory (relative path) a request names, and the last segment when it names a file.
fn target(req: &Request<'_>, s: &Settings) -> Result<(String, Option<String>), Refusal> {
    let rel = match path::validate(req.path(), &s.prefix, s.hidden) {
        Ok(r) => r,
        Err(Rejection::Malformed) => return Err(Refusal::new(400, "malformed path")),
        Err(Rejection::Hidden) => return Err(Refusal::new(403, "hidden names are refused")),
        Err(Rejection::OutsidePrefix) => return Err(Refusal::new(404, "not found")),
    };
    if rel.trailing_slash || rel.rel.is_empty() {
        return Ok((rel.rel.into_owned(), None));
    }
    let (dir, name) = rel.rel.rsplit_once('/').unwrap_or(("", &rel.rel));
    Ok((dir.to_string(), Some(name.to_string())))
}

/// Checks a file name from a client: one segment, not hidden (unless allowed), not `.`/`..`.
fn valid_name(name: &str, hidden: bool) -> Result<&str, Refusal> {
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name.len() > MAX_NAME
        || name.contains(['/', '\\'])
        || name.chars().any(char::is_control)
        || (name.starts_with('.') && !hidden);
    if bad {
        return Err(Refusal::new(
            400,
            format!("file name not allowed: {name:?}"),
        ));
    }
    Ok(name)
}

fn put(root: &Root, s: &Settings, up: &Uploads, req: &mut Request<'_>) -> Result<Stored, Refusal> {
    let (dir, name) = target(req, s)?;
    let name = name.ok_or_else(|| Refusal::new(400, "PUT needs a file name in the URL"))?;
    valid_name(&name, s.hidden)?;
    if req
        .body()
        .content_length()
        .is_some_and(|n| n > up.max_file_bytes)
    {
        return Err(Refusal::new(413, "file exceeds --max-upload"));
    }
    let dir = Arc::new(root.open_dir(&dir, s.symlinks_out)?);
    let mut limited = LimitedRead {
        inner: req.body(),
        left: up.max_file_bytes,
    };
    let size = store(&dir, &name, &mut limited, up.overwrite)?;
    Ok(Stored {
        status: 201,
        text: format!("stored {name} ({size} bytes)\n"),
    })
}

fn post(root: &Root, s: &Settings, up: &Uploads, req: &mut Request<'_>) -> Result<Stored, Refusal> {
    // The URL names the directory, with or without its trailing slash.
    let dir = match target(req, s)? {
        (dir, None) => dir,
        (parent, Some(name)) if parent.is_empty() => name,
        (parent, Some(name)) => format!("{parent}/{name}"),
    };
    let boundary = multipart::boundary(req.header("content-type"))
        .map_err(|v| Refusal::new(v.status(), v.rule()))?;
    let dir = Arc::new(root.open_dir(&dir, s.symlinks_out)?);
    let limits = MultipartLimits {
        max_part_bytes: up.max_file_bytes,
        ..MultipartLimits::default()
    };
    let mut form = Multipart::new(req.body(), &boundary, limits);
    let mut text = String::new();
    while let Some(mut part) = form.next_part().map_err(from_body)? {
        if let Some(filename) = part.filename().map(str::to_string) {
            if filename.is_empty() {
                // A file input left empty by the browser.
                continue;
            }
            valid_name(&filename, s.hidden)?;
            let size = store(&dir, &filename, &mut part, up.overwrite)?;
            text.push_str(&format!("stored {filename} ({size} bytes)\n"));
        } else if part.name() == MKDIR_FIELD && up.mkdir {
            let mut name = String::new();
            part.take(MAX_NAME as u64 + 1)
                .read_to_string(&mut name)
                .map_err(from_body)?;
            let name = name.trim();
            if !name.is_empty() {
                mkdir(&dir, valid_name(name, s.hidden)?)?;
                text.push_str(&format!("created {name}/\n"));
            }
        }
    }
    if text.is_empty() {
        return Err(Refusal::new(400, "no file in the form"));
    }
    Ok(Stored { status: 201, text })
}

/// Creates subdirectory `name` of `dir`.
fn mkdir(dir: &Arc<fs::File>, name: &str) -> Result<(), Refusal> {
    let (dir, name) = (Arc::clone(dir), name.to_string());
    blocking_io(move || {
        Ok(rustix::fs::mkdirat(
            &*dir,
            name.as_str(),
            Mode::from(0o755),
        )?)
    })
    .map_err(from_disk)
}

/// Streams `body` into `dir/name` through a temporary file; returns the bytes stored.
fn store(
    dir: &Arc<fs::File>,
    name: &str,
    body: &mut dyn Read,
    overwrite: bool,
) -> Result<u64, Refusal> {
    let (temp, file) = TempFile::create(dir).map_err(from_disk)?;
    let mut file = moria_streams::File::from_std(file);
    let mut buf = vec![0; WRITE_CHUNK];
    let mut size = 0u64;
    loop {
        let mut filled = 0;
        while filled < buf.len() {
            match body.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(from_body(e)),
            }
        }
        if filled == 0 {
            break;
        }
        file.write_all(&buf[..filled]).map_err(from_disk)?;
        size += filled as u64;
    }
    drop(file);
    temp.commit(name, overwrite).map_err(from_disk)?;
    Ok(size)
}

/// A temporary file's name in the target directory, removed on drop unless committed.
struct TempFile {
    dir: Arc<fs::File>,
    /// Empty once committed.
    name: String,
}

impl TempFile {
    /// Creates a new temporary file: its guard and the file open for writing.
    fn create(dir: &Arc<fs::File>) -> io::Result<(TempFile, fs::File)> {
        let mut random = [0u8; 8];
        moria_crypto::rng::fill(&mut random).map_err(io::Error::other)?;
        let name = format!("{TEMP_PREFIX}{:016x}", u64::from_le_bytes(random));
        let (d, n) = (Arc::clone(dir), name.clone());
        let file = blocking_io(move || {
            let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
            Ok(fs::File::from(rustix::fs::openat(
                &*d,
                n.as_str(),
                flags,
                Mode::from(0o644),
            )?))
        })?;
        let guard = TempFile {
            dir: Arc::clone(dir),
            name,
        };
        Ok((guard, file))
    }

    /// Renames the file to `name` (refusing to replace one unless `overwrite`).
    fn commit(mut self, name: &str, overwrite: bool) -> io::Result<()> {
        let (dir, temp, name) = (Arc::clone(&self.dir), self.name.clone(), name.to_string());
        let flags = if overwrite {
            RenameFlags::empty()
        } else {
            RenameFlags::NOREPLACE
        };
        blocking_io(move || {
            Ok(rustix::fs::renameat_with(
                &*dir,
                temp.as_str(),
                &*dir,
                name.as_str(),
                flags,
            )?)
        })?;
        self.name.clear();
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if self.name.is_empty() {
            return;
        }
        let (dir, name) = (Arc::clone(&self.dir), std::mem::take(&mut self.name));
        if let Err(e) = blocking_io(move || {
            Ok(rustix::fs::unlinkat(
                &*dir,
                name.as_str(),
                rustix::fs::AtFlags::empty(),
            )?)
        }) {
            log::warn!("upload: cannot remove a temporary file: {e}");
        }
    }
}

/// A request body cut at `left` bytes: one more is a 413.
struct LimitedRead<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for LimitedRead<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(out)?;
        if n as u64 > self.left {
            return Err(Violation::PartTooLarge.into());
        }
        self.left -= n as u64;
        Ok(n)
    }
}
