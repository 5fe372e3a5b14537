//! Directory listings: the entries, read on the offload pool (the page is `page/`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Most entries listed (the rest are counted but not shown).
pub const MAX_ENTRIES: usize = 10_000;

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The name (invalid UTF-8 replaced, then `linkable` is false).
    pub name: String,
    /// Whether a request can name it (only UTF-8 names can be).
    pub linkable: bool,
    pub is_dir: bool,
    pub size: u64,
    pub modified: Option<SystemTime>,
}

/// Reads the entries of the open directory `dir` (call on the offload pool). Hidden names
/// unless `hidden`, `.` and `..` are skipped; names that are not UTF-8 are listed but not
/// linked (no request could name them); symlinks are described as links (never followed, so nothing outside the root
/// leaks). Returns the entries (at most [`MAX_ENTRIES`]) and how many were left out.
pub(crate) fn read_entries(
    dir: &std::fs::File,
    hidden: bool,
) -> std::io::Result<(Vec<Entry>, usize)> {
    use rustix::fs::{statat, AtFlags, Dir, FileType};
    let mut out = Vec::new();
    let mut left_out = 0;
    for entry in Dir::read_from(dir)? {
        let entry = entry?;
        let raw = entry.file_name();
        let name = String::from_utf8_lossy(raw.to_bytes());
        let linkable = raw.to_str().is_ok();
        if name == "." || name == ".." || (name.starts_with('.') && !hidden) {
            continue;
        }
        if out.len() == MAX_ENTRIES {
            left_out += 1;
            continue;
        }
        let Ok(st) = statat(dir, raw, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let modified = u64::try_from(st.st_mtime)
            .ok()
            .map(|s| UNIX_EPOCH + Duration::from_secs(s));
        out.push(Entry {
            name: name.into_owned(),
            linkable,
            is_dir: FileType::from_raw_mode(st.st_mode) == FileType::Directory,
            size: u64::try_from(st.st_size).unwrap_or(0),
            modified,
        });
    }
    Ok((out, left_out))
}
