//! Uploads into StaticFiles with `curl` as the client: `-F` multipart (several files, quoted and
//! odd names), `-T` PUT, 409 without overwrite and replacement with it, 413 past the size
//! limit, the traversal rules on the target (400/403, nothing written), `mkdir`, and a client
//! that stops mid-part leaving nothing behind (no file, no temporary file).

use std::fs;
use std::io::Write;
use std::net::{Shutdown, SocketAddr};
use std::path::Path;
use std::process::Command;

use moria_http::static_files::Uploads;

use crate::common::curl::require_curl;
use crate::common::files::serve;
use crate::common::{connect, read_response, stop};

/// Runs curl against `http://addr{target}`; returns the status and the body.
fn curl(addr: SocketAddr, target: &str, args: &[&str]) -> (u16, String) {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "20", "-w", "%{http_code}"])
        .args(args)
        .arg(format!("http://{addr}{target}"))
        .output()
        .expect("curl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.split_at(text.len() - 3);
    (code.parse().expect("status"), body.to_string())
}

/// The names in `dir`, sorted (hidden ones too: a temporary file left behind shows).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn uploads(max: u64, overwrite: bool) -> Option<Uploads> {
    Some(Uploads {
        max_file_bytes: max,
        overwrite,
        mkdir: true,
    })
}

#[test]
fn curl_form_uploads_store_each_file_in_the_directory() {
    require_curl();
    let root = tempfile::tempdir().unwrap();
    fs::create_dir(root.path().join("in")).unwrap();
    let src = tempfile::tempdir().unwrap();
    let a = src.path().join("a.txt");
    let b = src.path().join("b b&'.bin");
    fs::write(&a, "alpha\r\n--not a boundary\r\n").unwrap();
    fs::write(&b, vec![0u8, 13, 10, 45, 45, 255]).unwrap();
    let server = serve(root.path(), |s| s.uploads(uploads(1 << 20, false)));
    let addr = server.local_addr();
    let (code, body) = curl(
        addr,
        "/in/",
        &[
            "-F",
            &format!("one=@{}", a.display()),
            "-F",
            &format!("two=@{}", b.display()),
            "-F",
            "note=just a field",
        ],
    );
    assert_eq!(code, 201, "{body}");
    assert!(body.contains("stored a.txt (25 bytes)"), "{body}");
    assert_eq!(names(&root.path().join("in")), ["a.txt", "b b&'.bin"]);
    assert_eq!(
        fs::read(root.path().join("in/a.txt")).unwrap(),
        fs::read(&a).unwrap()
    );
    assert_eq!(
        fs::read(root.path().join("in/b b&'.bin")).unwrap(),
        fs::read(&b).unwrap()
    );
    // The same again: refused, the first copy kept.
    fs::write(&a, "changed").unwrap();
    let (code, _) = curl(addr, "/in/", &["-F", &format!("one=@{}", a.display())]);
    assert_eq!(code, 409);
    assert_eq!(
        fs::read_to_string(root.path().join("in/a.txt"))
            .unwrap()
            .len(),
        25
    );
    // A browser's form (Accept: text/html) goes back to the listing.
    let (code, _) = curl(
        addr,
        "/in/",
        &["-H", "Accept: text/html", "-F", "f=@-;filename=c.txt"],
    );
    assert_eq!(code, 303);
    // The directory's URL without its slash names it too; a file's URL is no directory.
    let (code, body) = curl(addr, "/in", &["-F", "f=@-;filename=d.txt"]);
    assert_eq!((code, body.as_str()), (201, "stored d.txt (0 bytes)\n"));
    let (code, _) = curl(addr, "/in/a.txt", &["-F", "f=@-;filename=e.txt"]);
    assert_eq!(code, 404);
    stop(&server);
}

#[test]
fn curl_put_stores_replaces_only_when_allowed_and_enforces_the_limit() {
    require_curl();
    let root = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let a = src.path().join("put.txt");
    fs::write(&a, "first").unwrap();
    let strict = serve(root.path(), |s| s.uploads(uploads(1000, false)));
    let (code, body) = curl(strict.local_addr(), "/", &["-T", a.to_str().unwrap()]);
    assert_eq!((code, body.as_str()), (201, "stored put.txt (5 bytes)\n"));
    let (code, _) = curl(strict.local_addr(), "/", &["-T", a.to_str().unwrap()]);
    assert_eq!(code, 409);
    let big = src.path().join("big.bin");
    fs::write(&big, vec![7u8; 1001]).unwrap();
    let (code, body) = curl(strict.local_addr(), "/", &["-T", big.to_str().unwrap()]);
    assert_eq!(code, 413, "{body}");
    let (code, body) = curl(
        strict.local_addr(),
        "/",
        &["-F", &format!("f=@{}", big.display())],
    );
    assert_eq!(code, 413, "{body}");
    assert!(body.contains("part exceeds the size limit"), "{body}");
    assert_eq!(names(root.path()), ["put.txt"]);
    stop(&strict);

    let lenient = serve(root.path(), |s| s.uploads(uploads(1000, true)));
    fs::write(&a, "second").unwrap();
    let (code, _) = curl(lenient.local_addr(), "/", &["-T", a.to_str().unwrap()]);
    assert_eq!(code, 201);
    assert_eq!(
        fs::read_to_string(root.path().join("put.txt")).unwrap(),
        "second"
    );
    stop(&lenient);
}

#[test]
fn targets_follow_the_traversal_rules_and_nothing_is_written_outside() {
    require_curl();
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path(), |s| s.uploads(uploads(1 << 20, false)));
    let addr = server.local_addr();
    for (target, want) in [
        ("/..%2fescape.txt", 400),
        ("/a/../../escape.txt", 400),
        ("/.hidden", 403),
        ("/missing-dir/x.txt", 404),
        ("/%5c..%5cescape.txt", 400),
    ] {
        let (code, body) = curl(
            addr,
            target,
            &["--path-as-is", "-X", "PUT", "--data-binary", "x"],
        );
        assert_eq!(code, want, "{target}: {body}");
    }
    // A client path in a file name is cut to its last component (as old browsers sent them);
    // what is left must be a plain, visible name.
    for (name, want) in [
        ("../escape.txt", 201),
        ("a/b.txt", 201),
        ("c/../c.txt", 201),
        (".hidden", 400),
        ("..", 400),
        ("x/", 400),
    ] {
        let form = format!("f=@-;filename=\"{name}\"");
        let (code, body) = curl(addr, "/", &["-F", &form]);
        assert_eq!(code, want, "{name}: {body}");
    }
    assert_eq!(names(root.path()), ["b.txt", "c.txt", "escape.txt"]);
    assert!(!root.path().parent().unwrap().join("escape.txt").exists());
    // mkdir is allowed here.
    let (code, body) = curl(addr, "/", &["-F", "mkdir=new dir"]);
    assert_eq!((code, body.as_str()), (201, "created new dir/\n"));
    assert!(root.path().join("new dir").is_dir());
    assert_eq!(names(root.path()).len(), 4);
    let r = crate::common::exchange(addr, b"DELETE /b.txt HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(
        (r.status, r.header("allow")),
        (405, Some("GET, HEAD, POST, PUT"))
    );
    stop(&server);
}

#[test]
fn a_client_that_stops_mid_part_leaves_nothing_behind() {
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path(), |s| s.uploads(uploads(1 << 30, false)));
    for declared in [true, false] {
        let mut s = connect(server.local_addr());
        let part = "--XyZ\r\nContent-Disposition: form-data; name=f; filename=cut.bin\r\n\r\n";
        let framing = if declared {
            "Content-Length: 10000000\r\n"
        } else {
            "Transfer-Encoding: chunked\r\n"
        };
        let head = format!(
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Type: multipart/form-data; boundary=XyZ\r\n\
             {framing}\r\n"
        );
        s.write_all(head.as_bytes()).unwrap();
        let data = [part.as_bytes(), &[b'x'; 300_000]].concat();
        if declared {
            s.write_all(&data).unwrap();
        } else {
            s.write_all(format!("{:x}\r\n", data.len()).as_bytes())
                .unwrap();
            s.write_all(&data).unwrap();
            s.write_all(b"\r\n").unwrap();
        }
        // The server answers (or just closes, on a loaded machine perhaps already): either way
        // the upload is over.
        let _ = s.shutdown(Shutdown::Write);
        let _ = read_response(&mut s, false);
        drop(s);
        crate::common::wait_until("the cut upload to be cleaned up", || {
            names(root.path()).is_empty()
        });
    }
    stop(&server);
}
