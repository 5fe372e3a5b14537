//! The file server's listing in headless Chromium (over WebDriver): the page lists by default,
//! sorts by size through its header link, uploads two files through its form (the page
//! reloads with them listed, the bytes on disk equal), downloads the directory as `.tar`
//! through its link (unpacked by GNU tar, equal to the tree), and turns dark with
//! `prefers-color-scheme`. With `MORIA_SCREENSHOTS=DIR` it also saves the listing, light and
//! dark, as PNGs there (the README's pictures come from this).

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::fileserver::fileserver_with;
use crate::common::fileserver::url_in;
use crate::common::webdriver::Browser;

/// Every file (with its bytes) under `dir`, by path relative to it.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

/// The names the page lists, in order.
fn listed(browser: &Browser) -> Vec<String> {
    let v = browser.script(
        "return Array.from(document.querySelectorAll('tbody tr[data-entry] bdi'))\
         .map(e => e.textContent)",
    );
    v.as_array()
        .expect("names")
        .iter()
        .map(|n| n.as_str().unwrap_or_default().to_string())
        .collect()
}

/// A small tree worth looking at.
fn tree(root: &Path) {
    fs::create_dir_all(root.join("photos")).unwrap();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("README.md"), "# Files\n".repeat(40)).unwrap();
    fs::write(root.join("notes <&> \"draft\".txt"), "n".repeat(1_500)).unwrap();
    fs::write(root.join("archive.tar.gz"), vec![1u8; 3 * 1024 * 1024]).unwrap();
    fs::write(root.join("photos/cat.png"), vec![2u8; 200_000]).unwrap();
    fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    fs::write(root.join("song.mp3"), vec![3u8; 700_000]).unwrap();
}

#[test]
fn listing_sorts_uploads_and_downloads_in_chromium() {
    let root = tempfile::tempdir().unwrap();
    tree(root.path());
    let (_server, banner) = fileserver_with(root.path(), &["--no-https", "--upload"]);
    let base = url_in(&banner, "http");
    let browser = Browser::start();
    browser.goto(&base);
    assert_eq!(
        listed(&browser),
        [
            "photos",
            "src",
            "archive.tar.gz",
            "notes <&> \"draft\".txt",
            "README.md",
            "song.mp3"
        ]
    );
    if let Some(dir) = std::env::var_os("MORIA_SCREENSHOTS") {
        let dir = PathBuf::from(dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("listing-light.png"), browser.screenshot()).unwrap();
        browser.color_scheme("dark");
        fs::write(dir.join("listing-dark.png"), browser.screenshot()).unwrap();
        browser.color_scheme("light");
    }
    let background = || browser.script("return getComputedStyle(document.body).backgroundColor");
    assert_eq!(background(), Value::from("rgb(255, 255, 255)"));
    browser.color_scheme("dark");
    assert_eq!(background(), Value::from("rgb(13, 17, 23)"));
    browser.color_scheme("light");

    // Sort by size: directories first, then smallest to largest; again: largest first.
    browser.click(&browser.find("th.s a"));
    assert_eq!(
        listed(&browser),
        [
            "photos",
            "src",
            "README.md",
            "notes <&> \"draft\".txt",
            "song.mp3",
            "archive.tar.gz"
        ]
    );
    browser.click(&browser.find("th.s a"));
    assert_eq!(listed(&browser)[2], "archive.tar.gz");

    // Upload two files through the form; the page reloads with them.
    let src = tempfile::tempdir().unwrap();
    let one = src.path().join("uploaded one.txt");
    let two = src.path().join("uploaded-two.bin");
    fs::write(&one, "first upload\n").unwrap();
    fs::write(
        &two,
        (0..100_000u32).map(|i| (i % 256) as u8).collect::<Vec<_>>(),
    )
    .unwrap();
    browser.goto(&format!("{base}src/"));
    let input = browser.find("#up input[type=file]");
    browser.send_keys(&input, &format!("{}\n{}", one.display(), two.display()));
    browser.click(&browser.find("#up button"));
    browser.find_xpath("//bdi[text()='uploaded-two.bin']");
    assert_eq!(
        listed(&browser),
        ["main.rs", "uploaded one.txt", "uploaded-two.bin"]
    );
    assert_eq!(
        fs::read(root.path().join("src/uploaded one.txt")).unwrap(),
        fs::read(&one).unwrap()
    );
    assert_eq!(
        fs::read(root.path().join("src/uploaded-two.bin")).unwrap(),
        fs::read(&two).unwrap()
    );

    // Download the whole tree as .tar through the page's link.
    browser.goto(&base);
    let b64 = browser.script_async(
        "const done = arguments[arguments.length - 1];\
         fetch(document.querySelector('a[href=\"?download=tar\"]').href)\
           .then(r => r.arrayBuffer())\
           .then(b => { const u = new Uint8Array(b); let s = '';\
             for (let i = 0; i < u.length; i += 8192) s += String.fromCharCode(...u.subarray(i, i + 8192));\
             done(btoa(s)); });",
    );
    let tar = moria_crypto::encoding::from_base64(b64.as_str().expect("base64")).expect("tar");
    let out = tempfile::tempdir().unwrap();
    let mut untar = Command::new("tar")
        .args(["-xf", "-", "-C"])
        .arg(out.path())
        .stdin(Stdio::piped())
        .spawn()
        .expect("tar runs: install the Debian package tar");
    untar.stdin.take().unwrap().write_all(&tar).unwrap();
    assert!(untar.wait().unwrap().success());
    let name = root.path().file_name().unwrap();
    assert_eq!(files(&out.path().join(name)), files(root.path()));
}
