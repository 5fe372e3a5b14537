//! `respond_stream` over raw TCP: whole bodies, HEAD, single ranges (206 + Content-Range),
//! multiple ranges (multipart/byteranges), 416, If-Range, from a file (zero-copy path) and from
//! an in-memory seekable reader. The transfer counters show the file body really took the
//! zero-copy path; that test runs in a process of its own (`common::process`), as the counters
//! are the process's.

use std::io::{Cursor, Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::process::own_process;
use crate::common::*;
use moria_http::{respond_stream, HandlerResult, Request, Response, Server, Source, StreamInfo};

const ETAG: &str = "\"v1\"";
const LAST_MODIFIED: &str = "Sun, 06 Nov 1994 08:49:37 GMT";

fn content() -> Vec<u8> {
    (0..1000u32).map(|i| b'a' + (i % 26) as u8).collect()
}

fn serve_file(
    path: std::path::PathBuf,
) -> impl Fn(&mut Request<'_>, &mut Response) -> HandlerResult + Send + Sync + 'static {
    move |req: &mut Request<'_>, res: &mut Response| -> HandlerResult {
        let mut info = StreamInfo::new(1000, "text/plain");
        info.etag = Some(ETAG);
        info.last_modified = httpdate::parse_http_date(LAST_MODIFIED).ok();
        let source: Source = if req.path() == "/mem" {
            Source::seekable(Cursor::new(content()))
        } else {
            moria_streams::File::open(&path)?.into()
        };
        respond_stream(req, res, source, &info)?;
        Ok(())
    }
}

/// The file behind one test's server, removed when dropped.
struct Fixture {
    path: std::path::PathBuf,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn server() -> (Server, Fixture) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path =
        std::env::temp_dir().join(format!("moria-http-ranges-{}-{n}.txt", std::process::id()));
    std::fs::write(&path, content()).unwrap();
    (
        start(Server::builder(), serve_file(path.clone())),
        Fixture { path },
    )
}

fn get(server: &Server, path: &str, extra: &str) -> Resp {
    exchange(
        server.local_addr(),
        format!("GET {path} HTTP/1.1\r\nHost: a\r\n{extra}\r\n").as_bytes(),
    )
}

#[test]
fn whole_body_from_file_and_memory() {
    use moria_streams::transfer::{transfer_stats, TransferStats};
    // The transfer counters are the process's: no other test may move bytes meanwhile.
    if !own_process(module_path!(), "whole_body_from_file_and_memory") {
        return;
    }
    let (server, _p) = server();
    let mut paths = Vec::new();
    for path in ["/file", "/mem"] {
        let before = transfer_stats();
        let mut s = connect(server.local_addr());
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let r = read_response(&mut s, false).expect("a response");
        // The server closes after the response, so its transfer has returned by then.
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).unwrap();
        paths.push(transfer_stats().since(&before));
        assert_eq!(r.status, 200);
        assert_eq!(r.body, content());
        assert!(rest.is_empty());
        assert_eq!(r.header("accept-ranges"), Some("bytes"));
        assert_eq!(r.header("etag"), Some(ETAG));
        assert_eq!(r.header("last-modified"), Some(LAST_MODIFIED));
    }
    let file_by_sendfile = TransferStats {
        sendfile_transfers: 1,
        sendfile_bytes: 1000,
        ..TransferStats::default()
    };
    // The in-memory body is written out directly: no transfer at all.
    assert_eq!(paths, [file_by_sendfile, TransferStats::default()]);
    stop(&server);
}

#[test]
fn single_range_is_206() {
    let (server, _p) = server();
    for path in ["/file", "/mem"] {
        let r = get(&server, path, "Range: bytes=10-19\r\n");
        assert_eq!(r.status, 206);
        assert_eq!(r.header("content-range"), Some("bytes 10-19/1000"));
        assert_eq!(r.body, &content()[10..20]);
        let r = get(&server, path, "Range: bytes=-5\r\n");
        assert_eq!(r.header("content-range"), Some("bytes 995-999/1000"));
        assert_eq!(r.body, &content()[995..]);
    }
    stop(&server);
}

#[test]
fn multiple_ranges_are_multipart_and_merged() {
    let (server, _p) = server();
    for path in ["/file", "/mem"] {
        let r = get(&server, path, "Range: bytes=0-4, 3-9, 100-104\r\n");
        assert_eq!(r.status, 206);
        let ct = r.header("content-type").unwrap().to_string();
        let boundary = ct
            .strip_prefix("multipart/byteranges; boundary=")
            .expect(&ct);
        let text = r.text();
        // 0-4 and 3-9 merge into 0-9: two parts.
        assert_eq!(
            text.matches(&format!("--{boundary}\r\n")).count(),
            2,
            "{text}"
        );
        assert!(
            text.contains("Content-Range: bytes 0-9/1000\r\n\r\nabcdefghij\r\n"),
            "{text}"
        );
        assert!(
            text.contains("Content-Range: bytes 100-104/1000\r\n\r\nwxyza\r\n"),
            "{text}"
        );
        assert!(text.ends_with(&format!("--{boundary}--\r\n")));
        assert_eq!(
            r.header("content-length")
                .unwrap()
                .parse::<usize>()
                .unwrap(),
            r.body.len()
        );
    }
    stop(&server);
}

#[test]
fn unsatisfiable_or_too_many_ranges_are_416() {
    let (server, _p) = server();
    let r = get(&server, "/file", "Range: bytes=5000-\r\n");
    assert_eq!(r.status, 416);
    assert_eq!(r.header("content-range"), Some("bytes */1000"));
    let many: Vec<String> = (0..20).map(|i| format!("{}-{}", i * 10, i * 10)).collect();
    let r = get(
        &server,
        "/file",
        &format!("Range: bytes={}\r\n", many.join(",")),
    );
    assert_eq!(r.status, 416);
    stop(&server);
}

#[test]
fn invalid_range_is_ignored() {
    let (server, _p) = server();
    let r = get(&server, "/file", "Range: bytes=9-1\r\n");
    assert_eq!(r.status, 200);
    assert_eq!(r.body.len(), 1000);
    stop(&server);
}

#[test]
fn if_range_decides_between_206_and_200() {
    let (server, _p) = server();
    let r = get(
        &server,
        "/file",
        &format!("Range: bytes=0-0\r\nIf-Range: {ETAG}\r\n"),
    );
    assert_eq!(r.status, 206);
    let r = get(
        &server,
        "/file",
        "Range: bytes=0-0\r\nIf-Range: \"old\"\r\n",
    );
    assert_eq!(r.status, 200);
    let r = get(
        &server,
        "/file",
        &format!("Range: bytes=0-0\r\nIf-Range: {LAST_MODIFIED}\r\n"),
    );
    assert_eq!(r.status, 206);
    let r = get(
        &server,
        "/file",
        "Range: bytes=0-0\r\nIf-Range: Mon, 07 Nov 1994 08:49:37 GMT\r\n",
    );
    assert_eq!(r.status, 200);
    stop(&server);
}

#[test]
fn head_gets_the_headers_only() {
    let (server, _p) = server();
    let mut s = connect(server.local_addr());
    s.write_all(b"HEAD /file HTTP/1.1\r\nHost: a\r\nRange: bytes=0-9\r\n\r\nGET /mem HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
    let r = read_response(&mut s, true).unwrap();
    assert_eq!(r.status, 200, "Range applies to GET only");
    assert_eq!(r.header("content-length"), Some("1000"));
    assert_eq!(read_response(&mut s, false).unwrap().body, content());
    stop(&server);
}
