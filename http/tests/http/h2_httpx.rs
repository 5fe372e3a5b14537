//! Python's `httpx` with `h2` (what `httpx[http2]` installs; .tools/venv, `./test.sh
//! --install-only`) as an HTTP/2 client: GET, POST with a body and ten concurrent requests on
//! one connection, over TLS (ALPN) and over h2c (prior knowledge, `http1=False`). The handler
//! answers with what it saw (`Request::version`, the method, the body's length, the client's
//! port), so the test proves HTTP/2, one connection, and the body read.

use std::io::Read;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;

use moria_crypto::{Identity, TlsAcceptor};
use moria_http::{HandlerResult, Request, Response, Server};

use crate::common::ws::tool;
use crate::common::{start, stop};

/// GET, POST and ten concurrent GETs with one `AsyncClient`; prints one line per answer.
const SCRIPT: &str = r#"
import asyncio, sys
import httpx
url, ca = sys.argv[1], sys.argv[2]
async def main():
    verify = ca if ca else False
    async with httpx.AsyncClient(http1=False, http2=True, verify=verify) as c:
        r = await c.get(url + "/get")
        print(r.http_version, r.status_code, r.text)
        r = await c.post(url + "/post", content=b"x" * 100000)
        print(r.http_version, r.status_code, r.text)
        rs = await asyncio.gather(*(c.get(url + "/many/%d" % i) for i in range(10)))
        for r in rs:
            print(r.http_version, r.status_code, r.text)
asyncio.run(main())
"#;

fn handler(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let mut body = Vec::new();
    req.body().read_to_end(&mut body)?;
    res.body(format!(
        "{} {} {} {}",
        req.version(),
        req.method_str(),
        body.len(),
        req.peer_addr().port()
    ));
    Ok(())
}

/// Runs the script against `url`; the lines it printed.
fn httpx(url: &str, ca: Option<&Path>) -> Vec<String> {
    let python = tool("venv/bin/python3");
    let probe = Command::new(&python)
        .args(["-c", "import httpx, h2"])
        .status();
    assert!(
        probe.is_ok_and(|s| s.success()),
        "Python httpx with h2 is missing from .tools/venv: run ./test.sh --install-only"
    );
    let ca = ca.map_or(String::new(), |p| p.display().to_string());
    let out = Command::new(&python)
        .args(["-c", SCRIPT, url, &ca])
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().map(str::to_owned).collect()
}

/// Every answer was HTTP/2 on one connection (one client port), with the bodies read.
fn check(lines: &[String]) {
    assert_eq!(lines.len(), 12, "{lines:?}");
    let port = |l: &str| l.rsplit(' ').next().unwrap().to_owned();
    let first_port = port(&lines[0]);
    for (i, line) in lines.iter().enumerate() {
        let (method, len) = if i == 1 {
            ("POST", 100_000)
        } else {
            ("GET", 0)
        };
        let want = format!("HTTP/2 200 HTTP/2.0 {method} {len} {first_port}");
        assert_eq!(line, &want, "{lines:?}");
    }
    assert_eq!(port(&lines[11]), first_port);
}

#[test]
fn httpx_over_h2c_with_prior_knowledge() {
    let server = start(Server::builder(), handler);
    let lines = httpx(&format!("http://{}", server.local_addr()), None);
    check(&lines);
    stop(&server);
}

#[test]
fn httpx_over_tls_negotiates_h2() {
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let acceptor = TlsAcceptor::builder(identity)
        .alpn(&["h2", "http/1.1"])
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, acceptor.certificate_pem().unwrap()).unwrap();
    let server = Server::builder()
        .listen_tls("127.0.0.1:0", acceptor)
        .start(handler)
        .unwrap();
    let addr: SocketAddr = server.local_addr();
    let lines = httpx(&format!("https://localhost:{}", addr.port()), Some(&ca));
    check(&lines);
    stop(&server);
}
