//! The file server's `--auth` (HTTP Basic) on HTTP and HTTPS, with curl as the client: no or
//! wrong credentials get 401 and the challenge, a read-only user (given by a password hash from
//! `--hash-password`) reads but may not upload (403), a full user uploads; a failure is logged
//! with the user name, never the password.

use std::fs;
use std::io::Write;
use std::process::{Command, Stdio};

use crate::common;
use crate::common::fileserver::{fileserver_logging, url_in};

/// curl's status code for `args` (over HTTPS, trusting the server's self-signed certificate).
fn curl(args: &[&str]) -> String {
    let mut all = vec!["-k", "-o", "/dev/null"];
    all.extend_from_slice(args);
    common::curl(&all)
}

/// `fileserver --hash-password` of `password`, as the README says to make one.
fn hash(password: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fileserver"))
        .arg("--hash-password")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("fileserver runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(password.as_bytes())
        .expect("password written");
    let out = child.wait_with_output().expect("hash printed");
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .trim()
        .to_string()
}

#[test]
fn basic_auth_guards_reads_and_uploads_on_http_and_https() {
    let root = tempfile::tempdir().unwrap();
    fs::write(root.path().join("a.txt"), "hello").unwrap();
    let upload = tempfile::NamedTempFile::new().unwrap();
    fs::write(upload.path(), "uploaded").unwrap();
    let hashed = hash("reader pw");
    assert!(hashed.starts_with("pbkdf2-sha256:"), "{hashed}");
    let log = tempfile::NamedTempFile::new().unwrap();
    let bob = format!("bob:{hashed}");
    let args = ["--https", "127.0.0.1:0", "--upload", "--auth", "ann:s3cret"];
    let (server, banner) = fileserver_logging(
        root.path(),
        &[&args[..], &["--auth-read-only", &bob]].concat(),
        log.reopen().unwrap().into(),
    );
    let file = upload.path().to_str().unwrap();
    for base in [url_in(&banner, "http"), url_in(&banner, "https")] {
        let a = format!("{base}a.txt");
        assert_eq!(curl(&[&a]), "401", "{a}: no credentials");
        let challenge = Command::new("curl")
            .args(["-sSk", "-o", "/dev/null", "-D", "-", &a])
            .output()
            .expect("curl");
        let head = String::from_utf8_lossy(&challenge.stdout).to_ascii_lowercase();
        assert!(
            head.contains("www-authenticate: basic realm=\"fileserver\""),
            "{head}"
        );
        assert_eq!(curl(&["-u", "ann:wrong", &a]), "401");
        assert_eq!(curl(&["-u", "ann:s3cret", &a]), "200");
        assert_eq!(curl(&["-u", "bob:reader pw", &a]), "200");
        assert_eq!(curl(&["-u", "bob:reader pw", "-T", file, &base]), "403");
        let target = format!("{base}from-{}.txt", &base[..5]);
        assert_eq!(curl(&["-u", "ann:s3cret", "-T", file, &target]), "201");
    }
    assert_eq!(
        fs::read(root.path().join("from-http:.txt")).unwrap(),
        b"uploaded"
    );
    assert_eq!(
        fs::read(root.path().join("from-https.txt")).unwrap(),
        b"uploaded"
    );
    drop(server);
    let text = fs::read_to_string(log.path()).unwrap();
    assert!(
        text.contains("Basic authentication failed for user \"ann\""),
        "{text}"
    );
    assert!(!text.contains("wrong"), "a password in the log:\n{text}");
}
