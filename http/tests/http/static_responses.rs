//! StaticFiles status codes and headers, one scenario per test: 200 with its headers, HEAD,
//! 404/403/405/301, index files, listings, content types, Cache-Control, conditional requests
//! (304/412), ranges (206, multipart, 416, If-Range), the precompressed `.gz` sibling and
//! on-the-fly gzip, and a mount prefix inside a Router. Run as root, the permission case runs
//! in a copy of this test binary started as `nobody` (root reads any file); the ETag case sets
//! modification times instead of waiting for the clock to tick.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::common::files::{serve, small_bytes, text_bytes, tree, SMALL_LEN};
use crate::common::process::{assert_passed, test_name};
use crate::common::*;
use moria_http::compress::Compression;
use moria_http::{Router, Server, StaticFiles};

fn request(addr: SocketAddr, method: &str, target: &str, headers: &[&str]) -> Resp {
    let mut raw = format!("{method} {target} HTTP/1.1\r\nHost: localhost\r\n");
    for h in headers {
        raw.push_str(h);
        raw.push_str("\r\n");
    }
    raw.push_str("\r\n");
    let mut s = connect(addr);
    s.write_all(raw.as_bytes()).unwrap();
    read_response(&mut s, method == "HEAD").expect("a response")
}

fn get(addr: SocketAddr, target: &str, headers: &[&str]) -> Resp {
    request(addr, "GET", target, headers)
}

fn gunzip(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(data)
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn small_file_has_every_header() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let r = get(server.local_addr(), "/small.bin", &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, small_bytes());
    assert_eq!(r.header("content-length"), Some("1312"));
    assert_eq!(r.header("content-type"), Some("application/octet-stream"));
    assert_eq!(r.header("accept-ranges"), Some("bytes"));
    let etag = r.header("etag").unwrap();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    let lm = r.header("last-modified").unwrap();
    assert!(httpdate::parse_http_date(lm).is_ok(), "{lm}");
    assert!(r.header("cache-control").is_none());
    assert!(r.header("vary").is_none());
    stop(&server);
}

#[test]
fn large_file_goes_out_whole_with_the_same_headers() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let r = get(server.local_addr(), "/big.txt", &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, text_bytes(300_000));
    assert_eq!(r.header("content-length"), Some("300000"));
    assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
    assert!(r.header("etag").is_some() && r.header("last-modified").is_some());
    stop(&server);
}

#[test]
fn head_has_the_get_headers_and_no_body() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let addr = server.local_addr();
    for target in ["/small.bin", "/big.txt"] {
        let g = get(addr, target, &[]);
        let h = request(addr, "HEAD", target, &[]);
        assert_eq!(h.status, 200);
        for name in [
            "content-length",
            "content-type",
            "etag",
            "last-modified",
            "accept-ranges",
        ] {
            assert_eq!(h.header(name), g.header(name), "{target} {name}");
        }
    }
    // Nothing follows the HEAD answer: the next answer on the connection is the GET's.
    let mut s = connect(addr);
    s.write_all(
        b"HEAD /small.bin HTTP/1.1\r\nHost: a\r\n\r\nGET /hello.txt HTTP/1.1\r\nHost: a\r\n\r\n",
    )
    .unwrap();
    assert_eq!(read_response(&mut s, true).unwrap().status, 200);
    assert_eq!(
        read_response(&mut s, false).unwrap().text(),
        "hello world\n"
    );
    stop(&server);
}

#[test]
fn empty_file_is_an_empty_200() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let r = get(server.local_addr(), "/empty.txt", &[]);
    assert_eq!((r.status, r.header("content-length")), (200, Some("0")));
    stop(&server);
}

#[test]
fn error_statuses() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let addr = server.local_addr();
    assert_eq!(get(addr, "/missing.txt", &[]).status, 404);
    assert_eq!(get(addr, "/hello.txt/", &[]).status, 404);
    assert_eq!(get(addr, "/.env", &[]).status, 403);
    assert_eq!(get(addr, "/out-link", &[]).status, 403);
    assert_eq!(get(addr, "/fifo", &[]).status, 403);
    assert_eq!(get(addr, "/a/../hello.txt", &[]).status, 400);
    for method in ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"] {
        let r = request(addr, method, "/hello.txt", &["Content-Length: 0"]);
        assert_eq!(
            (r.status, r.header("allow")),
            (405, Some("GET, HEAD")),
            "{method}"
        );
    }
    stop(&server);
}

#[test]
fn unreadable_file_is_forbidden() {
    // SAFETY: geteuid only reads the process's credentials.
    if unsafe { libc::geteuid() } == 0 {
        run_unprivileged(&test_name(module_path!(), "unreadable_file_is_forbidden"));
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let t = tree();
    let p = t.path("locked.txt");
    std::fs::write(&p, "locked").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    assert!(
        std::fs::read(&p).is_err(),
        "this process reads a mode 000 file: the case proves nothing"
    );
    let server = serve(&t.root(), |b| b);
    assert_eq!(get(server.local_addr(), "/locked.txt", &[]).status, 403);
    stop(&server);
}

/// Uid and gid of `nobody` / `nogroup` on Debian.
const NOBODY: u32 = 65534;

/// Runs the test `name` of this binary in a child process as `nobody`, and fails unless it ran
/// and passed there. The binary is copied to a scratch directory first, so that the child can
/// run it wherever the build lives (a checkout under /root, say); the child's temporary files
/// go to a directory it owns inside that scratch directory, removed with it.
fn run_unprivileged(name: &str) {
    use std::os::unix::fs::{chown, PermissionsExt};
    use std::os::unix::process::CommandExt;
    let scratch = tempfile::tempdir().unwrap();
    let open = std::fs::Permissions::from_mode(0o755);
    std::fs::set_permissions(scratch.path(), open.clone()).unwrap();
    let exe = scratch.path().join("test-binary");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    std::fs::set_permissions(&exe, open).unwrap();
    let tmp = scratch.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    chown(&tmp, Some(NOBODY), Some(NOBODY)).unwrap();
    let out = std::process::Command::new(&exe)
        .args([name, "--exact", "--test-threads=1", "--nocapture"])
        .env("TMPDIR", &tmp)
        .current_dir("/")
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot start {name} as uid {NOBODY} ({e}): run the suite as a non-root user")
        });
    assert_passed(&format!("{name} as uid {NOBODY}"), &out);
}

#[test]
fn hidden_files_are_served_when_allowed() {
    let t = tree();
    let server = serve(&t.root(), |b| b.hidden_files(true));
    let r = get(server.local_addr(), "/.env", &[]);
    assert_eq!(
        (r.status, r.text().as_str()),
        (200, crate::common::files::HIDDEN)
    );
    stop(&server);
}

#[test]
fn directory_without_slash_redirects_keeping_the_query() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let addr = server.local_addr();
    let r = get(addr, "/docs?x=1", &[]);
    assert_eq!((r.status, r.header("location")), (301, Some("/docs/?x=1")));
    let r = get(addr, "//docs", &[]);
    assert_eq!(r.header("location"), Some("/docs/"));
    stop(&server);
}

#[test]
fn directory_serves_its_index_file() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let r = get(server.local_addr(), "/docs/", &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.text(), "<p>docs index</p>\n");
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    stop(&server);
}

#[test]
fn empty_directory_without_index_no_information_leak() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let addr = server.local_addr();
    for target in ["/empty/", "/list/", "/"] {
        let r = get(addr, target, &[]);
        assert_eq!(
            (r.status, r.text().as_str()),
            (404, "404 Not Found\n"),
            "{target}"
        );
    }
    stop(&server);
}

#[test]
fn listing_is_sorted_escaped_and_linked() {
    let t = tree();
    let server = serve(&t.root(), |b| b.listing(true));
    let r = get(server.local_addr(), "/list/", &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    let html = r.text();
    assert!(html.contains("Index of /list/"));
    assert!(html.contains(
        "href=\"sub/\"><svg class=\"g\"><use href=\"#i-dir\"/></svg><bdi>sub</bdi>/</a>"
    ));
    assert!(html.contains("<bdi>b b.txt</bdi></a></td><td class=\"s\" title=\"2 bytes\">2 B</td>"));
    assert!(html.contains("href=\"b%20b.txt\""));
    assert!(html.contains("&lt;x&gt;&amp;.txt</bdi>"));
    assert!(!html.contains("<x>"));
    let pos = |s: &str| html.find(s).unwrap();
    assert!(pos(">sub<") < pos(">a.txt<") && pos(">a.txt<") < pos(">b b.txt<"));
    // The links work.
    let b = get(server.local_addr(), "/list/b%20b.txt", &[]);
    assert_eq!(b.text(), "bb");
    stop(&server);
}

#[test]
fn content_types_follow_the_extension() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let addr = server.local_addr();
    for (target, ct) in [
        ("/hello.txt", "text/plain; charset=utf-8"),
        ("/page.html", "text/html; charset=utf-8"),
        ("/style.css", "text/css; charset=utf-8"),
        ("/app.js", "text/javascript; charset=utf-8"),
        ("/data.json", "application/json; charset=utf-8"),
        ("/image.png", "image/png"),
        ("/noext", "application/octet-stream"),
        ("/caf%C3%A9.txt", "text/plain; charset=utf-8"),
    ] {
        let r = get(addr, target, &[]);
        assert_eq!(
            (r.status, r.header("content-type")),
            (200, Some(ct)),
            "{target}"
        );
    }
    stop(&server);
}

#[test]
fn cache_control_is_configurable() {
    let t = tree();
    let server = serve(&t.root(), |b| b.cache_control(Some("public, max-age=60")));
    let r = get(server.local_addr(), "/hello.txt", &[]);
    assert_eq!(r.header("cache-control"), Some("public, max-age=60"));
    let etag = r.header("etag").unwrap().to_string();
    let r = get(
        server.local_addr(),
        "/hello.txt",
        &[&format!("If-None-Match: {etag}")],
    );
    assert_eq!(
        (r.status, r.header("cache-control")),
        (304, Some("public, max-age=60"))
    );
    assert!(StaticFiles::builder(t.root())
        .cache_control(Some("a\r\nb"))
        .build()
        .is_err());
    stop(&server);
}

#[test]
fn conditional_requests() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let addr = server.local_addr();
    let first = get(addr, "/hello.txt", &[]);
    let etag = first.header("etag").unwrap().to_string();
    let lm = first.header("last-modified").unwrap().to_string();
    let st = |h: &str| get(addr, "/hello.txt", &[h]);

    let r = st(&format!("If-None-Match: {etag}"));
    assert_eq!((r.status, r.header("etag")), (304, Some(etag.as_str())));
    assert!(r.body.is_empty() && r.header("content-length").is_none());
    assert_eq!(st(&format!("If-None-Match: \"x\", W/{etag}")).status, 304);
    assert_eq!(st("If-None-Match: *").status, 304);
    assert_eq!(st("If-None-Match: \"other\"").status, 200);
    assert_eq!(st(&format!("If-Modified-Since: {lm}")).status, 304);
    assert_eq!(
        st("If-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT").status,
        200
    );
    assert_eq!(st("If-Modified-Since: not a date").status, 200);

    assert_eq!(st(&format!("If-Match: {etag}")).status, 200);
    assert_eq!(st("If-Match: *").status, 200);
    assert_eq!(st("If-Match: \"other\"").status, 412);
    assert_eq!(st(&format!("If-Match: W/{etag}")).status, 412);
    assert_eq!(st(&format!("If-Unmodified-Since: {lm}")).status, 200);
    assert_eq!(
        st("If-Unmodified-Since: Sat, 01 Jan 2000 00:00:00 GMT").status,
        412
    );

    // If-None-Match overrides If-Modified-Since.
    let r = get(
        addr,
        "/hello.txt",
        &[
            "If-None-Match: \"other\"",
            &format!("If-Modified-Since: {lm}"),
        ],
    );
    assert_eq!(r.status, 200);
    // A HEAD gets the same decisions.
    assert_eq!(
        request(
            addr,
            "HEAD",
            "/hello.txt",
            &[&format!("If-None-Match: {etag}")]
        )
        .status,
        304
    );
    stop(&server);
}

/// Sets the modification time of the file at `path`.
fn set_mtime(path: &Path, t: SystemTime) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(t).unwrap();
}

#[test]
fn a_changed_file_gets_a_new_etag() {
    // The new content has the same size and, rewritten in place, the same inode: only the
    // modification time tells the versions apart. Both times are set here rather than left to
    // the clock, whose tick may not separate two quick writes.
    let t = tree();
    let path = t.path("hello.txt");
    let t0 = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    set_mtime(&path, t0);
    let server = serve(&t.root(), |b| b);
    let addr = server.local_addr();
    let first = get(addr, "/hello.txt", &[]);
    assert_eq!(
        first.header("last-modified"),
        Some("Tue, 14 Nov 2023 22:13:20 GMT")
    );
    let before = first.header("etag").unwrap().to_string();
    assert_eq!(
        get(addr, "/hello.txt", &[]).header("etag"),
        Some(before.as_str()),
        "an unchanged file keeps its tag"
    );

    std::fs::write(&path, "hello again\n").unwrap();
    set_mtime(&path, t0 + Duration::from_secs(1));
    let r = get(addr, "/hello.txt", &[&format!("If-None-Match: {before}")]);
    assert_eq!((r.status, r.text().as_str()), (200, "hello again\n"));
    assert_eq!(
        r.header("last-modified"),
        Some("Tue, 14 Nov 2023 22:13:21 GMT")
    );
    assert_ne!(r.header("etag"), Some(before.as_str()));
    stop(&server);
}

#[test]
fn ranges() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let addr = server.local_addr();
    let data = small_bytes();
    for (target, data) in [
        ("/small.bin", data.clone()),
        ("/big.txt", text_bytes(300_000)),
    ] {
        let size = data.len();
        let r = get(addr, target, &["Range: bytes=10-19"]);
        assert_eq!(r.status, 206, "{target}");
        assert_eq!(
            r.header("content-range"),
            Some(format!("bytes 10-19/{size}").as_str())
        );
        assert_eq!(r.body, data[10..20]);
        let r = get(addr, target, &["Range: bytes=-5"]);
        assert_eq!(r.body, data[size - 5..]);
        let r = get(addr, target, &[&format!("Range: bytes={size}-")]);
        assert_eq!(r.status, 416);
        assert_eq!(
            r.header("content-range"),
            Some(format!("bytes */{size}").as_str())
        );
        let r = get(addr, target, &["Range: bytes=0-1,100-101"]);
        assert_eq!(r.status, 206);
        let ct = r.header("content-type").unwrap();
        assert!(ct.starts_with("multipart/byteranges; boundary="), "{ct}");
        let text = String::from_utf8_lossy(&r.body).into_owned();
        assert!(text.contains(&format!("Content-Range: bytes 0-1/{size}")));
        assert!(text.contains(&format!("Content-Range: bytes 100-101/{size}")));
        assert_eq!(get(addr, target, &["Range: items=0-1"]).status, 200);
    }
    stop(&server);
}

#[test]
fn if_range_applies_the_range_only_to_the_current_version() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let addr = server.local_addr();
    let first = get(addr, "/small.bin", &[]);
    let etag = first.header("etag").unwrap().to_string();
    let lm = first.header("last-modified").unwrap().to_string();
    let r = get(
        addr,
        "/small.bin",
        &["Range: bytes=0-9", &format!("If-Range: {etag}")],
    );
    assert_eq!((r.status, r.body.len()), (206, 10));
    let r = get(
        addr,
        "/small.bin",
        &["Range: bytes=0-9", &format!("If-Range: {lm}")],
    );
    assert_eq!(r.status, 206);
    let r = get(
        addr,
        "/small.bin",
        &["Range: bytes=0-9", "If-Range: \"stale\""],
    );
    assert_eq!((r.status, r.body.len()), (200, SMALL_LEN));
    stop(&server);
}

#[test]
fn precompressed_sibling_for_gzip_clients_only() {
    let t = tree();
    let server = serve(&t.root(), |b| b);
    let addr = server.local_addr();
    let r = get(addr, "/pre.css", &["Accept-Encoding: gzip, deflate"]);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.header("content-type"), Some("text/css; charset=utf-8"));
    assert_eq!(r.header("vary"), Some("Accept-Encoding"));
    assert_eq!(gunzip(&r.body), text_bytes(5_000));
    let gz_etag = r.header("etag").unwrap().to_string();
    let plain = get(addr, "/pre.css", &[]);
    assert_eq!(plain.body, text_bytes(5_000));
    assert!(plain.header("content-encoding").is_none());
    assert_ne!(plain.header("etag"), Some(gz_etag.as_str()));
    let r = get(
        addr,
        "/pre.css",
        &[
            "Accept-Encoding: gzip",
            &format!("If-None-Match: {gz_etag}"),
        ],
    );
    assert_eq!(r.status, 304);
    let off = serve(&t.root(), |b| b.precompressed_gzip(false));
    let r = get(off.local_addr(), "/pre.css", &["Accept-Encoding: gzip"]);
    assert!(r.header("content-encoding").is_none());
    stop(&server);
    stop(&off);
}

#[test]
fn gzip_on_the_fly_for_text() {
    let t = tree();
    let server = serve(&t.root(), |b| b.gzip(Some(Compression::default())));
    let addr = server.local_addr();
    for (target, data) in [
        ("/text.txt", text_bytes(20_000)),
        ("/big.txt", text_bytes(300_000)),
    ] {
        let r = get(addr, target, &["Accept-Encoding: gzip"]);
        assert_eq!(r.status, 200, "{target}");
        assert_eq!(r.header("content-encoding"), Some("gzip"));
        assert_eq!(r.header("vary"), Some("Accept-Encoding"));
        assert!(r.header("etag").unwrap().starts_with("W/"));
        assert_eq!(gunzip(&r.body), data);
        let plain = get(addr, target, &[]);
        assert_eq!(
            (plain.body.len(), plain.header("vary")),
            (data.len(), Some("Accept-Encoding"))
        );
    }
    // Not for binary types nor tiny files.
    let r = get(addr, "/small.bin", &["Accept-Encoding: gzip"]);
    assert!(r.header("content-encoding").is_none());
    let r = get(addr, "/hello.txt", &["Accept-Encoding: gzip"]);
    assert!(r.header("content-encoding").is_none());
    stop(&server);
}

#[test]
fn mounted_under_a_prefix_in_a_router() {
    let t = tree();
    let files = StaticFiles::builder(t.root())
        .prefix("/static/")
        .build()
        .unwrap();
    let router = Router::new().get("/static/*path", files).get(
        "/",
        |_: &mut moria_http::Request<'_>, res: &mut moria_http::Response| {
            res.body("home");
            Ok(())
        },
    );
    let server = start(Server::builder(), router);
    let addr = server.local_addr();
    assert_eq!(get(addr, "/static/hello.txt", &[]).text(), "hello world\n");
    assert_eq!(
        get(addr, "/static/docs", &[]).header("location"),
        Some("/static/docs/")
    );
    assert_eq!(get(addr, "/", &[]).text(), "home");
    assert_eq!(get(addr, "/hello.txt", &[]).status, 404);
    stop(&server);
}

#[test]
fn root_must_be_a_directory() {
    let t = tree();
    assert!(StaticFiles::new(t.path("hello.txt")).is_err());
    assert!(StaticFiles::new(t.path("missing")).is_err());
}

#[test]
fn open_file_cache_serves_the_kept_file_until_its_validity_ends() {
    use std::time::Duration;
    let t = tree();
    let kept = serve(&t.root(), |b| {
        b.open_file_cache(Some(Duration::from_secs(3600)))
    });
    let fresh = serve(&t.root(), |b| b.open_file_cache(Some(Duration::ZERO)));
    let (k, f) = (kept.local_addr(), fresh.local_addr());
    let before = get(k, "/hello.txt", &[]);
    assert_eq!(get(f, "/hello.txt", &[]).text(), "hello world\n");
    // Replace the file by rename: a new inode, as deployment tools do.
    std::fs::write(t.path("hello.new"), "brand new content\n").unwrap();
    std::fs::rename(t.path("hello.new"), t.path("hello.txt")).unwrap();
    let cached = get(k, "/hello.txt", &[]);
    assert_eq!(cached.text(), "hello world\n");
    assert_eq!(cached.header("etag"), before.header("etag"));
    assert_eq!(get(f, "/hello.txt", &[]).text(), "brand new content\n");
    // Range requests never use the cache.
    let r = get(k, "/hello.txt", &["Range: bytes=0-4"]);
    assert_eq!((r.status, r.text().as_str()), (206, "brand"));
    // HEAD, conditionals and the precompressed sibling work from the cache too.
    assert_eq!(
        request(k, "HEAD", "/hello.txt", &[]).header("content-length"),
        Some("12")
    );
    let etag = before.header("etag").unwrap();
    assert_eq!(
        get(k, "/hello.txt", &[&format!("If-None-Match: {etag}")]).status,
        304
    );
    for _ in 0..2 {
        let gz = get(k, "/pre.css", &["Accept-Encoding: gzip"]);
        assert_eq!(gunzip(&gz.body), text_bytes(5_000));
    }
    stop(&kept);
    stop(&fresh);
}
