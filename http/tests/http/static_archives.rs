//! Directory archives from StaticFiles, fetched by `curl` and unpacked by GNU `tar`: the
//! unpacked tree equals the served one (names over 100 bytes, paths over 255, a name that is
//! not UTF-8, empty files and directories), hidden names and symlinks stay out, `.tar.gz` too,
//! and without `archives(true)` the query changes nothing.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::files::serve;
use crate::common::stop;

/// Every file (with its bytes) and directory under `dir`, by path relative to it.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            if p.is_dir() {
                out.insert(rel, None);
                stack.push(p);
            } else {
                out.insert(rel, Some(fs::read(&p).unwrap()));
            }
        }
    }
    out
}

/// A tree with long names, deep paths, a non-UTF-8 name, and things archives leave out.
fn tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let long = "l".repeat(150);
    fs::create_dir_all(r.join("served").join(&long).join(&long)).unwrap();
    fs::write(
        r.join("served")
            .join(&long)
            .join(&long)
            .join(format!("{long}.txt")),
        "deep",
    )
    .unwrap();
    fs::write(r.join("served/a.txt"), "alpha\n").unwrap();
    fs::write(r.join("served/empty"), "").unwrap();
    fs::create_dir(r.join("served/empty-dir")).unwrap();
    fs::write(
        r.join("served").join(OsStr::from_bytes(b"bad-\xff.bin")),
        [1, 2, 3],
    )
    .unwrap();
    fs::write(
        r.join("served/big.bin"),
        (0..300_000u32).map(|i| (i % 251) as u8).collect::<Vec<_>>(),
    )
    .unwrap();
    root
}

/// The parts of the tree an archive must hold (the tree minus hidden names and links).
fn expected(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    snapshot(&root.join("served"))
}

fn fetch_and_unpack(url: &str, gz: bool) -> tempfile::TempDir {
    let out = tempfile::tempdir().unwrap();
    let mut curl = Command::new("curl")
        .args(["-sSf", "--max-time", "30", url])
        .stdout(Stdio::piped())
        .spawn()
        .expect("curl runs: install the Debian package curl");
    let status = Command::new("tar")
        .args([if gz { "-xzf" } else { "-xf" }, "-", "-C"])
        .arg(out.path())
        .stdin(curl.stdout.take().unwrap())
        .status()
        .expect("tar runs: install the Debian package tar");
    assert!(status.success(), "tar failed on {url}");
    assert!(curl.wait().unwrap().success(), "curl failed on {url}");
    out
}

#[test]
fn tar_and_tar_gz_unpack_to_the_served_tree() {
    let root = tree();
    let served = root.path().join("served");
    fs::write(served.join(".secret"), "hidden").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", served.join("link")).unwrap();
    let want = {
        let mut w = expected(root.path());
        w.remove(Path::new(".secret"));
        w.remove(Path::new("link"));
        w
    };
    let server = serve(root.path(), |s| s.archives(true));
    for (query, gz) in [("tar", false), ("tar.gz", true)] {
        let url = format!("http://{}/served/?download={query}", server.local_addr());
        let out = fetch_and_unpack(&url, gz);
        assert_eq!(snapshot(&out.path().join("served")), want, "{query}");
    }
    stop(&server);
}

#[test]
fn archive_headers_and_the_switch() {
    let root = tree();
    let on = serve(root.path(), |s| s.archives(true).listing(true));
    let r = crate::common::get(on.local_addr(), "/served/?download=tar.gz");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers().get("content-type"), Some("application/gzip"));
    assert_eq!(
        r.headers().get("content-disposition"),
        Some("attachment; filename=\"served.tar.gz\"; filename*=UTF-8''served.tar.gz")
    );
    let r = crate::common::get(on.local_addr(), "/served/a.txt?download=tar");
    assert_eq!(r.status(), 404);
    stop(&on);
    let off = serve(root.path(), |s| s.listing(true));
    let r = crate::common::get(off.local_addr(), "/served/?download=tar");
    assert_eq!(
        r.headers().get("content-type"),
        Some("text/html; charset=utf-8")
    );
    stop(&off);
}
