//! Path traversal: a corpus of request targets that try to reach `secret.txt`, planted just
//! outside the served root (plain and percent-encoded `..`, double encoding, backslashes, NUL,
//! overlong UTF-8, Unicode dot look-alikes, absolute paths, symlinks out of the root, hidden
//! files). No answer may contain the secret, the hidden file or `/etc/passwd`, every answer is a
//! 4xx (or no answer at all for a target the parser drops), and the server still serves a
//! normal file afterwards — with the fast path on, with every call offloaded, and with the
//! open-file cache.

use std::io::Write;

use crate::common::files::{serve, tree, HIDDEN, SECRET};
use crate::common::*;

const CORPUS: &[&str] = &[
    "/../secret.txt",
    "/../../secret.txt",
    "/../../../../../../secret.txt",
    "/..%2fsecret.txt",
    "/..%2Fsecret.txt",
    "/%2e%2e/secret.txt",
    "/%2E%2E/secret.txt",
    "/%2e%2e%2fsecret.txt",
    "/.%2e/secret.txt",
    "/%2e./secret.txt",
    "/%252e%252e/secret.txt",
    "/%252e%252e%252fsecret.txt",
    "/..%252fsecret.txt",
    "/%25%32%65%25%32%65/secret.txt",
    "/%%32%65%%32%65/secret.txt",
    "/....//secret.txt",
    "/....//....//secret.txt",
    "/..././secret.txt",
    "/.../secret.txt",
    "/%2e%2e%2e/secret.txt",
    "/....%2f....%2fsecret.txt",
    "/..\\secret.txt",
    "/..%5csecret.txt",
    "/..%5Csecret.txt",
    "/%5c..%5csecret.txt",
    "/..%5c..%5csecret.txt",
    "/\\..\\secret.txt",
    "/%00../secret.txt",
    "/secret.txt%00",
    "/..%00/secret.txt",
    "/.%00./secret.txt",
    "/hello.txt%00.png",
    "/%c0%ae%c0%ae/secret.txt",
    "/%c0%ae%c0%ae%c0%afsecret.txt",
    "/..%c0%afsecret.txt",
    "/%e0%80%ae%e0%80%ae/secret.txt",
    "/%c1%9c..%c1%9csecret.txt",
    "/%uff0e%uff0e/secret.txt",
    "/%ef%bc%8e%ef%bc%8e/secret.txt",
    "/%e2%80%a4%e2%80%a4/secret.txt",
    "/%ef%bc%8f..%ef%bc%8fsecret.txt",
    "/..%e2%88%96secret.txt",
    "//../secret.txt",
    "///..//secret.txt",
    "/./../secret.txt",
    "/a/../../secret.txt",
    "/list/../../secret.txt",
    "/list/%2e%2e/%2e%2e/secret.txt",
    "/hello.txt/../../secret.txt",
    "/hello.txt%2f..%2f..%2fsecret.txt",
    "/..;/secret.txt",
    "/..%3b/secret.txt",
    "/%0d%0a/../secret.txt",
    "../secret.txt",
    "..%2fsecret.txt",
    "secret.txt",
    "http://localhost/../secret.txt",
    "http://localhost/%2e%2e/secret.txt",
    "/etc/passwd",
    "//etc/passwd",
    "/%2fetc%2fpasswd",
    "/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
    "/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/C:\\secret.txt",
    "/C:/secret.txt",
    "/~/secret.txt",
    "/out-link",
    "/out-link/",
    "/abs-link",
    "/dir-link",
    "/dir-link/",
    "/dir-link/secret.txt",
    "/dir-link/%2e%2e/secret.txt",
    "/in-link/../../secret.txt",
    "/docs/up-link/../../secret.txt",
    "/.env",
    "/%2eenv",
    "/.git/config",
    "/%2egit/config",
    "/list/.hidden",
    "/list/%2ehidden",
    "/fifo",
];

/// Sends `target` on a fresh connection and returns everything the server sent.
fn probe(addr: std::net::SocketAddr, target: &str) -> Vec<u8> {
    let mut s = connect(addr);
    let req = format!("GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).unwrap();
    read_until_closed(&mut s)
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

fn run_corpus(inline: bool, cache: bool) {
    assert!(CORPUS.len() >= 60, "{} payloads", CORPUS.len());
    let t = tree();
    let server = serve(&t.root(), |b| {
        b.inline_io(inline)
            .listing(true)
            .open_file_cache(cache.then(|| std::time::Duration::from_secs(60)))
    });
    let addr = server.local_addr();
    for target in CORPUS {
        let out = probe(addr, target);
        for needle in [SECRET, HIDDEN, "root:x:0:0"] {
            assert!(!contains(&out, needle), "{target}: leaked {needle:?}");
        }
        let text = String::from_utf8_lossy(&out);
        let status = text.split(' ').nth(1).unwrap_or("");
        assert!(
            out.is_empty() || ["400", "403", "404"].contains(&status),
            "{target}: {text}"
        );
    }
    let ok = exchange(addr, b"GET /hello.txt HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!((ok.status, ok.text().as_str()), (200, "hello world\n"));
    stop(&server);
}

#[test]
fn traversal_corpus_never_reaches_outside_the_root() {
    run_corpus(true, false);
}

#[test]
fn traversal_corpus_with_the_open_file_cache() {
    run_corpus(true, true);
}

#[test]
fn traversal_corpus_with_every_call_offloaded() {
    run_corpus(false, false);
}

#[test]
fn listing_never_shows_hidden_names_or_follows_links_out() {
    let t = tree();
    let server = serve(&t.root(), |b| b.listing(true));
    let addr = server.local_addr();
    for target in ["/", "/list/", "/docs/"] {
        let out = probe(addr, target);
        assert!(
            !contains(&out, ".hidden") && !contains(&out, ".env"),
            "{target}"
        );
        assert!(!contains(&out, SECRET), "{target}");
    }
    stop(&server);
}

#[test]
fn symlinks_out_of_the_root_are_served_only_when_allowed() {
    let t = tree();
    let strict = serve(&t.root(), |b| b);
    assert_eq!(
        exchange(
            strict.local_addr(),
            b"GET /out-link HTTP/1.1\r\nHost: a\r\n\r\n"
        )
        .status,
        403
    );
    let open = serve(&t.root(), |b| b.symlinks_outside_root(true));
    let r = exchange(
        open.local_addr(),
        b"GET /out-link HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    assert_eq!((r.status, r.text().as_str()), (200, SECRET));
    // Even then, `..` in the request path is refused.
    let r = exchange(
        open.local_addr(),
        b"GET /%2e%2e/secret.txt HTTP/1.1\r\nHost: a\r\n\r\n",
    );
    assert_eq!(r.status, 400);
    stop(&strict);
    stop(&open);
}
