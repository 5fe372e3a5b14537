//! The client through tinyproxy as a real forward proxy (started by the test with a generated
//! configuration and Basic credentials): plain HTTP in absolute form and HTTPS through CONNECT
//! to our servers, the TLS certificate checked end to end; without credentials, 407.

use std::fs;
use std::path::Path;

use crate::common::peer::Peer;
use crate::common::tls::start_tls;
use crate::common::*;
use moria_http::client::{Client, Error};
use moria_http::{HandlerResult, Request, Response, Server};

fn hello(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let via = req.header_str("via").unwrap_or("-");
    res.body(format!("origin saw {} via {via}", req.target()));
    Ok(())
}

/// tinyproxy on a free port, allowing 127.0.0.1 and asking for `u:p`.
fn start_tinyproxy() -> Peer {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path().to_owned();
    let port = moria_runtime::net::spare_port().expect("spare port");
    let conf = d.join("tinyproxy.conf");
    fs::write(
        &conf,
        format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 60\nAllow 127.0.0.1\nMaxClients 50\n\
             LogLevel Info\nLogFile \"{log}\"\nPidFile \"{pid}\"\nBasicAuth u p\n",
            log = d.join("tinyproxy.log").display(),
            pid = d.join("tinyproxy.pid").display(),
        ),
    )
    .unwrap();
    let args = [Path::new("-d"), Path::new("-c"), &conf];
    Peer::start("tinyproxy", "tinyproxy", &args, port, dir)
}

#[test]
fn http_and_https_through_tinyproxy() {
    let proxy = start_tinyproxy();
    let plain = start(Server::builder(), hello);
    let tls = start_tls(Server::builder(), hello);
    let with_creds = format!("http://u:p@127.0.0.1:{}", proxy.port);
    let client = Client::builder()
        .http_proxy(&with_creds)
        .https_proxy(&with_creds)
        .add_root_certificate_pem(&tls.pem)
        .build()
        .unwrap();

    let text = client
        .get(&url(&plain, "/plain?q=1"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(text.starts_with("origin saw /plain?q=1 via "), "{text}");
    assert!(text.contains("tinyproxy"), "forwarded by tinyproxy: {text}");

    let origin = format!(
        "https://localhost:{}/secure",
        tls.server.local_addr().port()
    );
    for _ in 0..3 {
        let text = client.get(&origin).send().unwrap().text().unwrap();
        assert_eq!(text, "origin saw /secure via -", "tunnelled, not forwarded");
    }

    let anonymous = Client::builder()
        .https_proxy(&format!("http://127.0.0.1:{}", proxy.port))
        .add_root_certificate_pem(&tls.pem)
        .build()
        .unwrap();
    let err = anonymous.get(&origin).send().unwrap_err();
    assert!(matches!(err, Error::Proxy { status: 407, .. }), "{err}");
    stop(&plain);
    stop(&tls.server);
}
