//! Opening files beneath the root, and which of those calls may run on the fiber.
//!
//! Confinement is the kernel's: `openat2(root, rel, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`
//! fails with `EXDEV` when `..` or a symlink would leave the root (absolute symlinks count as
//! leaving, even towards a place inside). With symlinks allowed out, `RESOLVE_BENEATH` is
//! dropped; the request path never holds `..` (see `path.rs`), so only symlinks can lead out.
//! Files are opened with `O_NONBLOCK` so a FIFO planted in the root cannot hang the open.
//!
//! Which calls run on the fiber (the trade-off, measured in bench/README.md "## fileserver"):
//! a pool round trip per call costs two thread switches, more than the whole syscall for a
//! file already in memory, so the calls that cannot wait on a device run inline and everything
//! else goes through `moria_runtime::blocking_io`:
//! - `openat2(.., RESOLVE_CACHED)` (Linux 5.12+) fails with `EAGAIN` instead of doing I/O when
//!   a path component is not in the dentry cache; then the open is repeated on the pool.
//! - `statx` on the open descriptor reads the in-memory inode on local file systems.
//! - small bodies are read with `preadv2(RWF_NOWAIT)`, which fails with `EAGAIN` instead of
//!   waiting for the disk (then the read goes to the pool) — see `body.rs`.
//! - `close` of a read-only descriptor does no I/O on a local file system.
//!
//! "Local" means the root's file system type is one of [`LOCAL_FS`] (decided once, by `statfs`,
//! when the root is opened) and the file lives on the root's mount; on anything else (NFS,
//! FUSE, CIFS, overlayfs, a mount below the root) every call goes to the pool. The inline open
//! adds `RESOLVE_NO_XDEV`, so it never crosses into a mount that was not classified. Without `openat2` (Linux < 5.6, or a seccomp filter that
//! refuses it) opening falls back to resolving the path on the pool and checking that the
//! canonical path stays under the canonical root (racy against a concurrent rename; logged
//! once at start).

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use moria_runtime::blocking_io;
use rustix::fs::{FsWord, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use super::listing;

/// File-system magic numbers (`statfs(2)`) of local block or memory file systems, whose open
/// descriptors answer `statx` and `close` from memory: ext2/3/4, XFS, Btrfs, tmpfs, F2FS, ramfs,
/// ZFS, bcachefs. Everything else is served through the pool: NFS, FUSE, CIFS/SMB, and
/// overlayfs too (its layers may be any of those, and `statfs` does not say which).
const LOCAL_FS: [FsWord; 8] = [
    0xEF53,
    0x5846_5342,
    0x9123_683E,
    0x0102_1994,
    0xF2F5_2010,
    0x8584_58F6,
    0x2FC1_2FC1,
    0xCA45_1A4E,
];

/// Whether files on a file system of this `statfs` magic may be opened and read on the fiber.
fn is_local(magic: FsWord) -> bool {
    LOCAL_FS.contains(&magic)
}

/// How the kernel can confine an open (probed once, when the root is opened).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resolver {
    /// `openat2` with `RESOLVE_CACHED`: try on the fiber first.
    Cached,
    /// `openat2` without `RESOLVE_CACHED` (Linux 5.6–5.11): always on the pool.
    Openat2,
    /// No `openat2`: canonicalise and compare on the pool.
    Canonical,
}

/// The served directory: an open descriptor, its canonical path and what the probes found.
#[derive(Debug)]
pub(crate) struct Root {
    fd: Arc<OwnedFd>,
    path: PathBuf,
    dev: u64,
    local: bool,
    resolver: Resolver,
}

/// What kind of thing an opened path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A FIFO, socket or device: never served.
    Other,
}

/// The metadata the responses need, read once per open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    pub kind: EntryKind,
    pub size: u64,
    pub mtime_secs: i64,
    pub mtime_nanos: u32,
    pub ino: u64,
    pub dev: u64,
}

impl Stat {
    fn of(m: &fs::Metadata) -> Stat {
        let ft = m.file_type();
        Stat {
            kind: if ft.is_file() {
                EntryKind::File
            } else if ft.is_dir() {
                EntryKind::Directory
            } else {
                EntryKind::Other
            },
            size: m.len(),
            mtime_secs: m.mtime(),
            mtime_nanos: u32::try_from(m.mtime_nsec()).unwrap_or(0),
            ino: m.ino(),
            dev: m.dev(),
        }
    }

    /// The modification time (clamped to the epoch).
    pub fn modified(&self) -> SystemTime {
        u64::try_from(self.mtime_secs).map_or(UNIX_EPOCH, |s| {
            UNIX_EPOCH + Duration::new(s, self.mtime_nanos.min(999_999_999))
        })
    }
}

/// An open file: plain (every call may run on the fiber) or a moria-streams file (every call,
/// and the close, on the offload pool).
#[derive(Debug)]
pub(crate) enum Handle {
    /// On a local file system and the root's device.
    Inline(fs::File),
    /// Anywhere else, or with the fast path turned off.
    Offloaded(moria_streams::File),
    /// A small fast-path file from the open-file cache, shared by concurrent requests (read
    /// with `pread` only, so its position never matters).
    Shared(Arc<fs::File>),
}

/// An open file or directory under the root, with its metadata.
#[derive(Debug)]
pub(crate) struct Opened {
    pub handle: Handle,
    pub stat: Stat,
}

impl Opened {
    /// The file as a moria-streams [`File`](moria_streams::File): every later call (and the
    /// close) on the offload pool, `sendfile` on plain TCP.
    pub(crate) fn into_stream(self) -> io::Result<moria_streams::File> {
        Ok(match self.handle {
            Handle::Inline(f) => moria_streams::File::from_std(f),
            Handle::Offloaded(f) => f,
            // A shared descriptor's position belongs to no one: open the same file again
            // (through /proc, so a renamed or deleted file is still the one described).
            Handle::Shared(f) => moria_streams::File::from_std(blocking_io(move || {
                fs::File::open(format!("/proc/self/fd/{}", f.as_raw_fd()))
            })?),
        })
    }
}

/// Why an open found nothing to serve.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// Nothing there (also: a file used as a directory, a name too long, a symlink loop).
    NotFound,
    /// There but refused: permissions, or a symlink leading out of the root.
    Forbidden,
    /// Anything else: a server error.
    Io(io::Error),
}

impl From<io::Error> for OpenError {
    fn from(e: io::Error) -> OpenError {
        match e.raw_os_error().map(Errno::from_raw_os_error) {
            Some(Errno::NOENT | Errno::NOTDIR | Errno::NAMETOOLONG | Errno::LOOP) => {
                OpenError::NotFound
            }
            Some(Errno::ACCESS | Errno::PERM | Errno::XDEV) => OpenError::Forbidden,
            _ => OpenError::Io(e),
        }
    }
}

fn resolve_flags(allow_symlinks_out: bool) -> ResolveFlags {
    if allow_symlinks_out {
        ResolveFlags::NO_MAGICLINKS
    } else {
        ResolveFlags::NO_MAGICLINKS | ResolveFlags::BENEATH
    }
}

fn flags() -> OFlags {
    OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY
}

impl Root {
    /// Opens `path` as the root (on the pool when called from a fiber) and probes what the
    /// kernel offers.
    pub(crate) fn open(path: &Path) -> io::Result<Root> {
        let path = path.to_path_buf();
        blocking_io(move || {
            let path = fs::canonicalize(&path)?;
            let dir = fs::File::open(&path)?;
            let meta = dir.metadata()?;
            if !meta.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} is not a directory", path.display()),
                ));
            }
            let fd = OwnedFd::from(dir);
            let local = rustix::fs::fstatfs(&fd)
                .map(|s| is_local(s.f_type))
                .unwrap_or(false);
            let probe = |resolve| rustix::fs::openat2(&fd, ".", flags(), Mode::empty(), resolve);
            let resolver = match probe(ResolveFlags::BENEATH | ResolveFlags::CACHED) {
                Ok(_) => Resolver::Cached,
                Err(_) if probe(ResolveFlags::BENEATH).is_ok() => Resolver::Openat2,
                Err(e) => {
                    log::warn!(
                        "openat2 unavailable ({e}): confining {} by canonical paths",
                        path.display()
                    );
                    Resolver::Canonical
                }
            };
            Ok(Root {
                fd: Arc::new(fd),
                path,
                dev: meta.dev(),
                local,
                resolver,
            })
        })
    }

    /// The canonical path of the root.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `rel` (validated, relative, `""` for the root itself) and reads its metadata;
    /// `inline` allows the non-blocking fast path.
    pub(crate) fn open_rel(
        &self,
        rel: &str,
        allow_symlinks_out: bool,
        inline: bool,
    ) -> Result<Opened, OpenError> {
        let rel = if rel.is_empty() { "." } else { rel };
        let resolve = resolve_flags(allow_symlinks_out);
        if inline {
            if let Some(opened) = self.open_inline(rel, resolve)? {
                return Ok(opened);
            }
        }
        let (root, root_path, resolver) = (Arc::clone(&self.fd), self.path.clone(), self.resolver);
        let rel = rel.to_string();
        let (file, stat) = blocking_io(move || {
            let file = match resolver {
                Resolver::Canonical => open_canonical(&root_path, &rel, allow_symlinks_out)?,
                _ => fs::File::from(rustix::fs::openat2(
                    &*root,
                    rel.as_str(),
                    flags(),
                    Mode::empty(),
                    resolve,
                )?),
            };
            let stat = Stat::of(&file.metadata()?);
            Ok((file, stat))
        })?;
        Ok(self.opened(file, stat, inline))
    }

    /// The open on the fiber, for a root on a local file system: `None` when it has to go to
    /// the pool — a path component not in the dentry cache (`RESOLVE_CACHED`), or a mount point
    /// on the way (`RESOLVE_NO_XDEV`: the mount below may be NFS or FUSE, whose open waits on
    /// the network or a daemon; only the root's own mount was classified).
    fn open_inline(&self, rel: &str, resolve: ResolveFlags) -> Result<Option<Opened>, OpenError> {
        if !self.local || self.resolver != Resolver::Cached {
            return Ok(None);
        }
        let how = resolve | ResolveFlags::CACHED | ResolveFlags::NO_XDEV;
        match rustix::fs::openat2(&*self.fd, rel, flags(), Mode::empty(), how) {
            Ok(fd) => {
                let file = fs::File::from(fd);
                let stat = Stat::of(&file.metadata()?);
                Ok(Some(self.opened(file, stat, true)))
            }
            // EXDEV is also how RESOLVE_BENEATH refuses an escape: the pool's open, without
            // NO_XDEV, tells the two apart.
            Err(Errno::AGAIN | Errno::XDEV) => Ok(None),
            Err(e) => Err(io::Error::from(e).into()),
        }
    }

    /// Reads the listing entries of directory `rel`, all on the offload pool (see
    /// [`listing::read_entries`]).
    pub(crate) fn list(
        &self,
        rel: &str,
        allow_symlinks_out: bool,
        hidden: bool,
    ) -> Result<(Vec<listing::Entry>, usize), OpenError> {
        let dir = self.open_dir(rel, allow_symlinks_out)?;
        Ok(blocking_io(move || listing::read_entries(&dir, hidden))?)
    }

    /// Opens directory `rel` (validated, `""` for the root) on the offload pool, confined like
    /// every open: what uploads write into and archives walk from.
    pub(crate) fn open_dir(
        &self,
        rel: &str,
        allow_symlinks_out: bool,
    ) -> Result<fs::File, OpenError> {
        let rel = if rel.is_empty() { "." } else { rel }.to_string();
        let (root, root_path, resolver) = (Arc::clone(&self.fd), self.path.clone(), self.resolver);
        let resolve = resolve_flags(allow_symlinks_out);
        Ok(blocking_io(move || {
            let dir = match resolver {
                Resolver::Canonical => open_canonical(&root_path, &rel, allow_symlinks_out)?,
                _ => fs::File::from(rustix::fs::openat2(
                    &*root,
                    rel.as_str(),
                    flags() | OFlags::DIRECTORY,
                    Mode::empty(),
                    resolve,
                )?),
            };
            if !dir.metadata()?.is_dir() {
                return Err(io::Error::from_raw_os_error(Errno::NOTDIR.raw_os_error()));
            }
            Ok(dir)
        })?)
    }

    fn opened(&self, file: fs::File, stat: Stat, inline: bool) -> Opened {
        let handle = if inline && self.local && stat.dev == self.dev {
            Handle::Inline(file)
        } else {
            Handle::Offloaded(moria_streams::File::from_std(file))
        };
        Opened { handle, stat }
    }
}

/// The fallback without `openat2`: resolve every symlink, check the result is under the root.
fn open_canonical(root: &Path, rel: &str, allow_symlinks_out: bool) -> io::Result<fs::File> {
    let path = fs::canonicalize(root.join(rel))?;
    if !allow_symlinks_out && !path.starts_with(root) {
        return Err(io::Error::from_raw_os_error(Errno::XDEV.raw_os_error()));
    }
    fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::write(root.join("a.txt"), "hello").unwrap();
        fs::write(dir.path().join("secret"), "secret").unwrap();
        symlink("../secret", root.join("out")).unwrap();
        symlink(dir.path().join("secret"), root.join("abs")).unwrap();
        symlink("a.txt", root.join("in")).unwrap();
        symlink("../a.txt", root.join("sub/up")).unwrap();
        let r = Root::open(&root).unwrap();
        (dir, r)
    }

    fn outcome(r: &Root, rel: &str, out: bool, inline: bool) -> Result<Stat, String> {
        r.open_rel(rel, out, inline)
            .map(|o| o.stat)
            .map_err(|e| format!("{e:?}"))
    }

    #[test]
    fn files_and_directories_open_with_their_metadata() {
        let (_d, r) = tree();
        for inline in [true, false] {
            let s = outcome(&r, "a.txt", false, inline).unwrap();
            assert_eq!((s.kind, s.size), (EntryKind::File, 5));
            assert_eq!(
                outcome(&r, "", false, inline).unwrap().kind,
                EntryKind::Directory
            );
            assert_eq!(
                outcome(&r, "sub", false, inline).unwrap().kind,
                EntryKind::Directory
            );
            assert_eq!(outcome(&r, "in", false, inline).unwrap().size, 5);
            assert_eq!(outcome(&r, "sub/up", false, inline).unwrap().size, 5);
        }
    }

    #[test]
    fn symlinks_out_of_the_root_are_forbidden_unless_allowed() {
        let (_d, r) = tree();
        for inline in [true, false] {
            for rel in ["out", "abs"] {
                let e = outcome(&r, rel, false, inline).unwrap_err();
                assert_eq!(e, "Forbidden", "{rel}");
                assert_eq!(outcome(&r, rel, true, inline).unwrap().size, 6);
            }
        }
    }

    #[test]
    fn missing_paths_are_not_found() {
        let (_d, r) = tree();
        for rel in ["nope", "a.txt/x", "sub/nope"] {
            assert_eq!(outcome(&r, rel, false, true).unwrap_err(), "NotFound");
        }
    }

    #[test]
    fn canonical_fallback_confines_too() {
        let (_d, r) = tree();
        assert!(open_canonical(r.path(), "a.txt", false).is_ok());
        let e = open_canonical(r.path(), "out", false).unwrap_err();
        assert!(matches!(OpenError::from(e), OpenError::Forbidden));
        assert!(open_canonical(r.path(), "out", true).is_ok());
    }

    #[test]
    fn local_block_file_systems_are_inline_and_remote_or_layered_ones_offloaded() {
        let inline = [
            (0xEF53, "ext4"),
            (0x5846_5342, "xfs"),
            (0x0102_1994, "tmpfs"),
        ];
        for (magic, name) in inline {
            assert!(is_local(magic), "{name}");
        }
        let offloaded = [
            (0x6969, "nfs"),
            (0x6573_5546, "fuse"),
            (0xFF53_4D42, "cifs"),
            (0xFE53_4D42, "smb2"),
            (0x794C_7630, "overlay"),
            (0x9FA0, "proc"),
            (0, "unknown"),
        ];
        for (magic, name) in offloaded {
            assert!(!is_local(magic), "{name}");
        }
    }

    /// A mount point and the directory above it, on a local file system that offers
    /// `RESOLVE_CACHED` (from `/proc/self/mountinfo`: `/proc` under `/`, `/dev/shm` under a
    /// tmpfs `/dev`, …).
    fn mount_below_a_local_root() -> Option<(Root, String)> {
        let info = fs::read_to_string("/proc/self/mountinfo").ok()?;
        info.lines()
            .filter_map(|l| l.split(' ').nth(4))
            .filter(|m| *m != "/" && !m.contains('\\'))
            .find_map(|m| {
                let m = Path::new(m);
                if !m.is_dir() {
                    return None;
                }
                let r = Root::open(m.parent()?).ok()?;
                let name = m.file_name()?.to_str()?.to_string();
                (r.local && r.resolver == Resolver::Cached).then_some((r, name))
            })
    }

    /// A mount point below a local root is never crossed on the fiber: the mount below was not
    /// classified, and could be NFS or FUSE.
    #[test]
    fn the_inline_open_does_not_cross_into_another_mount() {
        let (r, mount) = mount_below_a_local_root()
            .expect("a mount point under a local file system with openat2 RESOLVE_CACHED");
        let resolve = resolve_flags(false);
        // Through the pool: allowed, and it puts the path in the dentry cache.
        assert_eq!(
            outcome(&r, &mount, false, false).unwrap().kind,
            EntryKind::Directory
        );
        assert!(r.open_inline(&mount, resolve).unwrap().is_none(), "{mount}");
        assert!(r.open_inline(".", resolve).unwrap().is_some());
    }

    #[test]
    fn a_file_is_not_a_root() {
        let (d, _r) = tree();
        assert!(Root::open(&d.path().join("secret")).is_err());
    }
}
