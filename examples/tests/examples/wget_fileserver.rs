//! `wget` against the file server: a download identical to the served file; `-c` resuming an
//! interrupted download (a `.part` prefix) gives an identical file; a stale validator starts
//! over; an HTTP error status exits non-zero and leaves no file; a broken transfer exits
//! non-zero and leaves only the `.part` file; `http_proxy` is honoured; over HTTPS with a
//! self-signed certificate, wget refuses it unless told `-k` or `--cacert`, and sends
//! `--header` fields.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

use moria_crypto::{Identity, TlsAcceptor};
use moria_http::{HandlerResult, Request, Response, Server};

use crate::common::fileserver::{fileserver, fileserver_with, url_in};

fn wget(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wget"));
    // wget honours proxies from the environment; these downloads are loopback only.
    for var in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"] {
        cmd.env_remove(var);
    }
    cmd.current_dir(dir).args(args).output().expect("wget runs")
}

/// 3 MiB that differ everywhere, so a misplaced byte range shows.
fn content() -> Vec<u8> {
    (0u32..3 * 1024 * 1024 / 4)
        .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
        .collect()
}

#[test]
fn downloads_resumes_and_fails_cleanly() {
    let root = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let data = content();
    fs::write(root.path().join("big.bin"), &data).unwrap();
    let (_server, base) = fileserver(root.path());
    let url = format!("{base}big.bin");
    let dir = out.path();

    let o = wget(dir, &["-q", &url]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        fs::read(dir.join("big.bin")).unwrap() == data,
        "fresh download differs"
    );
    assert!(!dir.join("big.bin.part").exists());

    // An interrupted download: the first MiB in the .part file, no validator recorded.
    fs::write(dir.join("resumed.bin.part"), &data[..1024 * 1024]).unwrap();
    let o = wget(dir, &["-c", "-O", "resumed.bin", &url]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    assert!(said.contains("resuming at byte 1048576"), "{said}");
    assert!(
        fs::read(dir.join("resumed.bin")).unwrap() == data,
        "resumed file differs"
    );
    assert!(!dir.join("resumed.bin.part").exists());

    // A partial file of another version of the resource: If-Range fails, the server sends the
    // whole current file, which replaces the stale bytes.
    fs::write(dir.join("stale.bin.part"), vec![b'x'; 500_000]).unwrap();
    fs::write(dir.join("stale.bin.part.validator"), "\"an-old-etag\"").unwrap();
    let o = wget(dir, &["-c", "-O", "stale.bin", &url]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    assert!(said.contains("starting over"), "{said}");
    assert!(
        fs::read(dir.join("stale.bin")).unwrap() == data,
        "restarted file differs"
    );
    assert!(!dir.join("stale.bin.part.validator").exists());

    // A complete .part: the server says 416 for the range past the end; nothing is lost.
    fs::write(dir.join("whole.bin.part"), &data).unwrap();
    let o = wget(dir, &["-q", "-c", "-O", "whole.bin", &url]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(fs::read(dir.join("whole.bin")).unwrap() == data);

    let o = wget(
        dir,
        &["-q", "-O", "missing.bin", &format!("{base}missing.bin")],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("HTTP 404"), "{err}");
    assert!(!dir.join("missing.bin").exists());
    assert!(!dir.join("missing.bin.part").exists());
}

#[test]
fn honours_http_proxy_from_the_environment() {
    // A proxy double: answers the one request with the request line it received.
    let (addr, answered) = serve_once(|head| {
        let line = head.lines().next().unwrap_or_default();
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{line}",
            line.len()
        )
        .into_bytes()
    });
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_wget"))
        .current_dir(out.path())
        .env("http_proxy", format!("http://{addr}"))
        .env_remove("no_proxy")
        .env_remove("NO_PROXY")
        .args([
            "-q",
            "-O",
            "via-proxy.txt",
            "http://origin.invalid/file.txt",
        ])
        .output()
        .expect("wget runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    answered.join().unwrap();
    assert_eq!(
        fs::read_to_string(out.path().join("via-proxy.txt")).unwrap(),
        "GET http://origin.invalid/file.txt HTTP/1.1"
    );
}

/// A one-shot server thread: reads a request head, writes what `answer` makes of it, closes.
fn serve_once(
    answer: impl FnOnce(&str) -> Vec<u8> + Send + 'static,
) -> (std::net::SocketAddr, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let served = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && s.read(&mut b).unwrap() == 1 {
            head.push(b[0]);
        }
        s.write_all(&answer(&String::from_utf8_lossy(&head)))
            .unwrap();
    });
    (addr, served)
}

#[test]
fn a_broken_transfer_fails_and_leaves_only_the_part_file() {
    let mut answer = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n".to_vec();
    answer.extend_from_slice(&[b'z'; 400]);
    let (addr, served) = serve_once(move |_| answer);
    let out = tempfile::tempdir().unwrap();
    let o = wget(
        out.path(),
        &["-q", "-O", "cut.bin", &format!("http://{addr}/cut.bin")],
    );
    served.join().unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("transfer broken after 400 bytes"), "{err}");
    assert!(
        !out.path().join("cut.bin").exists(),
        "no truncated file looks complete"
    );
    assert_eq!(
        fs::read(out.path().join("cut.bin.part")).unwrap().len(),
        400
    );
}

/// Answers with the values of the `X-Test` fields it received, comma-separated.
fn echo_x_test(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let got: Vec<String> = req
        .headers_named("x-test")
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    res.body(got.join(","));
    Ok(())
}

#[test]
fn https_needs_a_trusted_certificate_and_sends_extra_headers() {
    let keys = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let identity = Identity::self_signed(&["localhost", "127.0.0.1"]).unwrap();
    let (cert, key) = (keys.path().join("cert.pem"), keys.path().join("key.pem"));
    fs::write(&cert, identity.certificate_pem().unwrap()).unwrap();
    fs::write(&key, identity.private_key_pem().unwrap()).unwrap();
    let cacert = cert.to_str().unwrap();
    let data = content()[..256 * 1024].to_vec();
    fs::write(root.path().join("tls.bin"), &data).unwrap();
    let (_server, banner) = fileserver_with(
        root.path(),
        &[
            "--https",
            "127.0.0.1:0",
            "--cert",
            cacert,
            "--key",
            key.to_str().unwrap(),
        ],
    );
    let url = format!("{}tls.bin", url_in(&banner, "https"));
    let dir = out.path();

    // The certificate is trusted by nobody: wget refuses it, says why, and leaves no file.
    let o = wget(dir, &["-q", "-O", "refused.bin", &url]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("certificate"), "{err}");
    assert!(err.contains("could not be verified"), "{err}");
    assert!(!dir.join("refused.bin").exists());
    assert!(!dir.join("refused.bin.part").exists());

    // -k skips the check; --cacert trusts the server's own certificate.
    for (name, flags) in [
        ("insecure.bin", &["-k"][..]),
        ("trusted.bin", &["--cacert", cacert]),
    ] {
        let mut args = vec!["-q", "-O", name];
        args.extend(flags);
        args.push(&url);
        let o = wget(dir, &args);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(fs::read(dir.join(name)).unwrap() == data, "{name} differs");
    }

    // --header reaches the server: an HTTPS echo of X-Test with the same certificate.
    let identity = Identity::from_pem(
        &identity.certificate_pem().unwrap(),
        &identity.private_key_pem().unwrap(),
    )
    .unwrap();
    let echo = Server::builder()
        .listen_tls(
            "127.0.0.1:0",
            TlsAcceptor::builder(identity).build().unwrap(),
        )
        .start(echo_x_test)
        .unwrap();
    let echo_url = format!("https://{}/echo", echo.local_addr());
    let o = wget(
        dir,
        &[
            "-q",
            "--cacert",
            cacert,
            "--header",
            "X-Test: 1",
            "-O",
            "echo.txt",
            &echo_url,
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(fs::read_to_string(dir.join("echo.txt")).unwrap(), "1");
    echo.shutdown_token().trigger();
    echo.wait();
}
