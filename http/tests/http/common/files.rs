//! The fixture tree the static-file tests serve, with a secret planted just outside the root.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use moria_http::{Server, StaticFiles, StaticFilesBuilder};

use super::start;

/// The content of the file planted next to the root: no response may ever contain it.
pub const SECRET: &str = "TOP-SECRET-7f3a9c51";
/// The content of the hidden file inside the root.
pub const HIDDEN: &str = "HIDDEN-DOTFILE-2b8e";
/// Size of `small.bin` (the siege file of Mordor's benchmark).
pub const SMALL_LEN: usize = 1312;

/// A temporary directory holding `root/` and, beside it, `secret.txt`.
pub struct Tree {
    pub dir: tempfile::TempDir,
}

impl Tree {
    /// The served root.
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    /// A path inside the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root().join(rel)
    }
}

/// The bytes of `small.bin`.
pub fn small_bytes() -> Vec<u8> {
    (0..SMALL_LEN).map(|i| (i * 7 % 251) as u8).collect()
}

/// Compressible text of `len` bytes.
pub fn text_bytes(len: usize) -> Vec<u8> {
    b"All work and no play makes Jack a dull boy.\n"
        .iter()
        .copied()
        .cycle()
        .take(len)
        .collect()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Builds the fixture tree.
pub fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path();
    fs::write(outside.join("secret.txt"), SECRET).unwrap();
    let root = outside.join("root");
    let w = |rel: &str, data: &[u8]| {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, data).unwrap();
    };
    w("hello.txt", b"hello world\n");
    w("small.bin", &small_bytes());
    w("page.html", b"<!DOCTYPE html><p>page</p>\n");
    w("data.json", b"{\"a\":1}\n");
    w("style.css", b"body{}\n");
    w("app.js", b"let a = 1;\n");
    w("image.png", b"\x89PNG\r\n\x1a\nnot really");
    w("noext", b"no extension\n");
    w("empty.txt", b"");
    w("text.txt", &text_bytes(20_000));
    w("big.txt", &text_bytes(300_000));
    w("pre.css", &text_bytes(5_000));
    w("pre.css.gz", &gzip(&text_bytes(5_000)));
    w(".env", HIDDEN.as_bytes());
    w(".git/config", HIDDEN.as_bytes());
    w("docs/index.html", b"<p>docs index</p>\n");
    w("list/a.txt", b"a");
    w("list/b b.txt", b"bb");
    w("list/<x>&.txt", b"x");
    w("list/.hidden", HIDDEN.as_bytes());
    w("list/sub/c.txt", b"c");
    w("caf\u{e9}.txt", b"accent\n");
    fs::create_dir_all(root.join("empty")).unwrap();
    symlink("../secret.txt", root.join("out-link")).unwrap();
    symlink(outside.join("secret.txt"), root.join("abs-link")).unwrap();
    symlink("..", root.join("dir-link")).unwrap();
    symlink("hello.txt", root.join("in-link")).unwrap();
    symlink("../hello.txt", root.join("docs/up-link")).unwrap();
    let fifo =
        std::ffi::CString::new(root.join("fifo").into_os_string().into_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    Tree { dir }
}

/// Starts a server on 127.0.0.1:0 serving `root` with `configure` applied to the builder.
pub fn serve(
    root: &Path,
    configure: impl FnOnce(StaticFilesBuilder) -> StaticFilesBuilder,
) -> Server {
    let files: StaticFiles = configure(StaticFiles::builder(root)).build().unwrap();
    start(Server::builder(), files)
}
