//! `multipart/form-data` over real sockets: the crate's client [`Form`] to a server reading with
//! [`Multipart`] — 10,000 tiny parts, empty parts, a delimiter at every offset around the
//! reader's buffer edge, files streamed from disk — violations answered with their status and
//! rule, and Python's `email` parser as a second opinion on what the client sends.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use moria_http::client::Client;
use moria_http::multipart::{self, Form, Multipart, MultipartLimits, BUFFER};
use moria_http::{HandlerResult, Request, Response, Server};

use crate::common::{start, stop, url};

/// Answers one line per part: `name\tfilename\tlength\tsum of bytes`, or the violation.
fn summarise(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let read = multipart::boundary(req.header("content-type"))
        .map_err(std::io::Error::from)
        .and_then(|boundary| parts(req, &boundary));
    match read {
        Ok(lines) => res.body(lines),
        Err(e) => {
            let v = multipart::Violation::of(&e).ok_or(e)?;
            res.status(v.status()).body(v.rule())
        }
    };
    Ok(())
}

fn parts(req: &mut Request<'_>, boundary: &str) -> std::io::Result<String> {
    let limits = MultipartLimits {
        max_parts: 20_000,
        ..MultipartLimits::default()
    };
    let mut form = Multipart::new(req.body(), boundary, limits);
    let mut out = String::new();
    let mut buf = vec![0; 8192];
    while let Some(mut part) = form.next_part()? {
        let (mut len, mut sum) = (0u64, 0u64);
        loop {
            let n = part.read(&mut buf)?;
            if n == 0 {
                break;
            }
            len += n as u64;
            sum += buf[..n].iter().map(|&b| u64::from(b)).sum::<u64>();
        }
        let file = part.filename().unwrap_or("-").to_string();
        out.push_str(&format!("{}\t{file}\t{len}\t{sum}\n", part.name()));
    }
    Ok(out)
}

fn server() -> Server {
    start(Server::builder().max_body(1 << 30), summarise)
}

fn post(server: &Server, form: Form) -> (u16, String) {
    let r = Client::new()
        .unwrap()
        .post(&url(server, "/"))
        .multipart(form)
        .send()
        .expect("POST");
    (r.status(), r.text().unwrap())
}

#[test]
fn ten_thousand_tiny_parts_and_empty_ones() {
    let server = server();
    let mut form = Form::new().unwrap();
    for i in 0..10_000 {
        form = form.text(&format!("f{i}"), if i % 2 == 0 { "" } else { "x" });
    }
    let (status, body) = post(&server, form);
    assert_eq!(status, 200);
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines.len(), 10_000);
    assert_eq!(lines[0], "f0\t-\t0\t0");
    assert_eq!(lines[9_999], "f9999\t-\t1\t120");
    stop(&server);
}

#[test]
fn a_delimiter_at_every_offset_around_the_buffer_edge() {
    let server = server();
    let mut form = Form::with_boundary("edge-boundary");
    let mut want = String::new();
    for len in BUFFER - 70..BUFFER + 70 {
        let data: Vec<u8> = (0..len).map(|i| (i % 7) as u8 + b'-').collect();
        let sum: u64 = data.iter().map(|&b| u64::from(b)).sum();
        want.push_str(&format!("p{len}\tf\t{len}\t{sum}\n"));
        let n = data.len() as u64;
        form = form.reader(
            &format!("p{len}"),
            "f",
            "application/octet-stream",
            std::io::Cursor::new(data),
            Some(n),
        );
    }
    let (status, body) = post(&server, form);
    assert_eq!((status, body), (200, want));
    stop(&server);
}

#[test]
fn files_stream_from_disk_with_their_names() {
    let server = server();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("naïve \"quoted\".bin");
    std::fs::write(&path, vec![3u8; 1_000_000]).unwrap();
    let form = Form::new().unwrap().file("upload", &path).unwrap();
    assert!(form.len().is_some());
    let (status, body) = post(&server, form);
    assert_eq!(
        (status, body.as_str()),
        (200, "upload\tnaïve %22quoted%22.bin\t1000000\t3000000\n")
    );
    stop(&server);
}

#[test]
fn violations_are_answered_with_their_status_and_rule() {
    let server = server();
    let client = Client::new().unwrap();
    let r = client
        .post(&url(&server, "/"))
        .header("Content-Type", "text/plain")
        .body("x")
        .send()
        .unwrap();
    assert_eq!(
        (r.status(), r.text().unwrap()),
        (400, multipart::Violation::NotMultipart.rule().to_string())
    );
    let r = client
        .post(&url(&server, "/"))
        .header("Content-Type", "multipart/form-data; boundary=b")
        .body("--b\r\nContent-Disposition: form-data; name=a\r\n\r\nunterminated")
        .send()
        .unwrap();
    assert_eq!(
        (r.status(), r.text().unwrap()),
        (400, multipart::Violation::Truncated.rule().to_string())
    );
    let mut form = Form::new().unwrap();
    for i in 0..20_001 {
        form = form.text(&i.to_string(), "");
    }
    let (status, body) = post(&server, form);
    assert_eq!((status, body.as_str()), (413, "too many parts"));
    stop(&server);
}

/// Parses `body` with Python's `email` package; one `name\tfilename\tlength` line per part.
fn python_parts(content_type: &str, body: &[u8]) -> String {
    const SCRIPT: &str = r#"
import sys, email.parser, email.policy
raw = sys.stdin.buffer.read()
msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(raw)
assert msg.is_multipart(), "not multipart"
for part in msg.iter_parts():
    name = part.get_param("name", header="content-disposition")
    filename = part.get_filename() or "-"
    print(f"{name}\t{filename}\t{len(part.get_payload(decode=True))}")
"#;
    let mut child = Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs: install the Debian package python3");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(format!("Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n").as_bytes())
        .unwrap();
    stdin.write_all(body).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python3 failed");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn python_reads_what_the_client_sends() {
    let captured = Arc::new(Mutex::new((String::new(), Vec::new())));
    let keep = Arc::clone(&captured);
    let server = start(
        Server::builder(),
        move |req: &mut Request<'_>, res: &mut Response| -> HandlerResult {
            let ct = req.header_str("content-type").unwrap_or("").to_string();
            let mut body = Vec::new();
            req.body().read_to_end(&mut body)?;
            *keep.lock().unwrap() = (ct, body);
            res.body("ok");
            Ok(())
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    std::fs::write(&path, b"\r\n--\r\n\x00\xff").unwrap();
    let form = Form::new()
        .unwrap()
        .text("title", "hello")
        .text("empty", "")
        .file("file", &path)
        .unwrap();
    let r = Client::new()
        .unwrap()
        .post(&url(&server, "/"))
        .multipart(form)
        .send()
        .unwrap();
    assert_eq!(r.status(), 200);
    let (ct, body) = captured.lock().unwrap().clone();
    assert_eq!(
        python_parts(&ct, &body),
        "title\t-\t5\nempty\t-\t0\nfile\tdata.bin\t8\n"
    );
    stop(&server);
}
