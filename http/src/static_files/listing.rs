//! Directory listings: the entries read on the offload pool, the HTML rendered by a pure
//! function (names HTML-escaped, links percent-encoded, directories first, then by name).

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::path::encode_path_into;
use crate::html::escape_into;

/// Most entries listed (the rest are counted but not shown).
pub const MAX_ENTRIES: usize = 10_000;

/// One listed entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: String,
    pub is_dir: bool,
    pub size: u64,
    pub modified: Option<SystemTime>,
}

/// Reads the entries of the open directory `dir` (call on the offload pool). Names that are
/// not UTF-8 (no request could name them), hidden names unless `hidden`, `.` and `..` are
/// skipped; symlinks are described as links (never followed, so nothing outside the root
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
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if name == "." || name == ".." || (name.starts_with('.') && !hidden) {
            continue;
        }
        if out.len() == MAX_ENTRIES {
            left_out += 1;
            continue;
        }
        let Ok(st) = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let modified = u64::try_from(st.st_mtime)
            .ok()
            .map(|s| UNIX_EPOCH + Duration::from_secs(s));
        out.push(Entry {
            name: name.to_string(),
            is_dir: FileType::from_raw_mode(st.st_mode) == FileType::Directory,
            size: u64::try_from(st.st_size).unwrap_or(0),
            modified,
        });
    }
    Ok((out, left_out))
}

/// Renders the listing page of the directory at URL path `dir_path` (decoded, with its
/// trailing slash).
pub(crate) fn render(dir_path: &str, mut entries: Vec<Entry>, left_out: usize) -> String {
    entries.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    let mut title = String::new();
    escape_into(dir_path, &mut title);
    let mut html = String::with_capacity(512 + entries.len() * 160);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of {title}</title>\
         </head>\n<body><h1>Index of {title}</h1>\n<table>\n\
         <tr><th>Name</th><th>Size</th><th>Last modified</th></tr>\n"
    );
    if dir_path != "/" {
        html.push_str("<tr><td><a href=\"../\">../</a></td><td>-</td><td>-</td></tr>\n");
    }
    for e in &entries {
        let slash = if e.is_dir { "/" } else { "" };
        let mut href = String::new();
        encode_path_into(&e.name, &mut href);
        // A name with ':' before any '/' would read as a URL scheme: anchor it with "./".
        let anchor = if e.name.contains(':') { "./" } else { "" };
        html.push_str("<tr><td><a href=\"");
        html.push_str(anchor);
        escape_into(&href, &mut html);
        html.push_str(slash);
        html.push_str("\">");
        escape_into(&e.name, &mut html);
        html.push_str(slash);
        html.push_str("</a></td><td>");
        if e.is_dir {
            html.push('-');
        } else {
            let _ = write!(html, "{}", e.size);
        }
        html.push_str("</td><td>");
        match e.modified {
            Some(t) => html.extend(crate::http_date::format_time(t).map(char::from)),
            None => html.push('-'),
        }
        html.push_str("</td></tr>\n");
    }
    html.push_str("</table>\n");
    if left_out > 0 {
        let _ = writeln!(html, "<p>{left_out} more entries not shown.</p>");
    }
    html.push_str("</body></html>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, is_dir: bool, size: u64) -> Entry {
        Entry {
            name: name.into(),
            is_dir,
            size,
            modified: Some(UNIX_EPOCH + Duration::from_secs(784_111_777)),
        }
    }

    #[test]
    fn names_are_escaped_and_links_encoded() {
        let html = render(
            "/a&b/",
            vec![
                entry("<script>x</script>.txt", false, 12),
                entry("a b\"c", false, 1),
            ],
            0,
        );
        assert!(html.contains("Index of /a&amp;b/"));
        assert!(!html.contains("<script>"));
        assert!(html.contains("&lt;script&gt;x&lt;/script&gt;.txt</a>"));
        assert!(html.contains("href=\"%3Cscript%3Ex%3C/script%3E.txt\""));
        assert!(html.contains("href=\"a%20b%22c\""));
        assert!(html.contains("<td>12</td><td>Sun, 06 Nov 1994 08:49:37 GMT</td>"));
    }

    #[test]
    fn directories_first_then_sorted_by_name() {
        let html = render(
            "/",
            vec![
                entry("b.txt", false, 1),
                entry("zdir", true, 0),
                entry("a.txt", false, 1),
                entry("adir", true, 0),
            ],
            3,
        );
        let pos = |s: &str| html.find(s).unwrap();
        assert!(pos(">adir/<") < pos(">zdir/<"));
        assert!(pos(">zdir/<") < pos(">a.txt<"));
        assert!(pos(">a.txt<") < pos(">b.txt<"));
        assert!(!html.contains("../"));
        assert!(html.contains("3 more entries"));
    }

    #[test]
    fn scheme_like_names_are_anchored() {
        let html = render("/x/", vec![entry("javascript:alert(1)", false, 1)], 0);
        assert!(html.contains("href=\"./javascript:alert(1)\""));
        assert!(html.contains("href=\"../\""));
    }
}
