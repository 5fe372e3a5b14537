//! The file server's memory stays flat when big files go through it: a 256 MiB upload (curl
//! `-T`, then curl `-F`) and a `.tar` of that tree leave the server's peak RSS far below the
//! file's size. (The 2 GiB figures in the README come from `bench/scripts/fileserver_memory.sh`,
//! the same steps at 2 GiB; too heavy for every CI run.)

use std::fs;

use crate::common::curl;
use crate::common::fileserver::{fileserver_with, url_in};

/// The size pushed through.
const SIZE: u64 = 256 << 20;
/// The peak RSS allowed: the file's size is 4x this, so a buffered file cannot hide under it.
const MAX_PEAK: u64 = 64 << 20;

/// The peak resident set of process `pid` (`VmHWM`), in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmHWM");
    kib * 1024
}

#[test]
fn big_uploads_and_archives_keep_memory_flat() {
    let root = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let big = src.path().join("big.bin");
    let file = fs::File::create(&big).unwrap();
    file.set_len(SIZE).unwrap();
    drop(file);
    let max = (2 * SIZE).to_string();
    let (server, banner) = fileserver_with(
        root.path(),
        &["--no-https", "--upload", "--max-upload", &max],
    );
    let base = url_in(&banner, "http");

    let put = curl(&["-T", big.to_str().unwrap(), &base]);
    assert!(put.ends_with("201"), "{put}");
    let form = format!("f=@{};filename=form.bin", big.display());
    let post = curl(&["-F", &form, &base]);
    assert!(post.ends_with("201"), "{post}");
    for name in ["big.bin", "form.bin"] {
        assert_eq!(fs::metadata(root.path().join(name)).unwrap().len(), SIZE);
    }
    let after_uploads = peak_rss(server.pid());

    let tar = curl(&["-o", "/dev/null", &format!("{base}?download=tar")]);
    assert!(tar.ends_with("200"), "{tar}");
    let after_archive = peak_rss(server.pid());
    assert!(
        after_uploads < MAX_PEAK && after_archive < MAX_PEAK,
        "peak RSS {after_uploads} after 2 x {SIZE} bytes uploaded, {after_archive} after the archive"
    );
}
