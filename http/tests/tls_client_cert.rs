//! Mutual TLS through the server: an HTTPS listener whose acceptor requires client
//! certificates; curl with `--cert` reaches the handler, which reads the verified
//! certificate from `TlsInfo`; curl without one is refused.

use std::fs;
use std::process::Command;

use moria_crypto::keys::PrivateKey;
use moria_crypto::pki::Pki;
use moria_crypto::x509::{CertBuilder, Usage};
use moria_crypto::{Identity, TlsAcceptor};
use moria_http::{HandlerResult, Request, Response, Server};

fn whoami(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let subject = req
        .tls()
        .and_then(|t| t.peer_certificate.as_ref())
        .map_or_else(|| "anonymous".to_string(), |c| c.subject());
    res.body(subject);
    Ok(())
}

fn curl(dir: &std::path::Path, url: &str, with_cert: bool) -> (bool, String) {
    let mut cmd = Command::new("curl");
    cmd.current_dir(dir)
        .args(["-sS", "--max-time", "30", "--cacert", "ca.pem"]);
    if with_cert {
        cmd.args(["--cert", "client.pem", "--key", "client.key"]);
    }
    let out = cmd
        .arg(url)
        .output()
        .expect("the `curl` command is missing: install the Debian package `curl`");
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

#[test]
fn handler_sees_the_verified_client_certificate() {
    let ca_key = PrivateKey::generate("ecdsa-p256").unwrap();
    let ca = CertBuilder::new("Client CA")
        .usage(Usage::Ca { path_len: None })
        .self_signed(&ca_key)
        .unwrap();
    let issue = |builder: CertBuilder| {
        let key = PrivateKey::generate("ecdsa-p256").unwrap();
        let cert = builder
            .public_key(key.public_key().unwrap())
            .issue(&ca, &ca_key)
            .unwrap();
        (cert, key)
    };
    let (server_cert, server_key) = issue(CertBuilder::new("localhost").hosts(&["127.0.0.1"]));
    let (client, client_key) = issue(CertBuilder::new("dwalin").usage(Usage::TlsClient));

    let pki = Pki::builder().add_root(&ca).build().unwrap();
    let acceptor = TlsAcceptor::builder(Identity::new(&server_cert, &[], &server_key).unwrap())
        .client_auth(&pki)
        .build()
        .unwrap();
    let server = Server::builder()
        .listen_tls("127.0.0.1:0", acceptor)
        .start(whoami)
        .unwrap();
    let url = format!("https://127.0.0.1:{}/", server.local_addrs()[0].port());

    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("ca.pem"), ca.to_pem().unwrap()).unwrap();
    fs::write(dir.path().join("client.pem"), client.to_pem().unwrap()).unwrap();
    fs::write(dir.path().join("client.key"), client_key.to_pem().unwrap()).unwrap();

    let (ok, body) = curl(dir.path(), &url, true);
    assert!(ok, "{body}");
    assert_eq!(body, "CN=dwalin");
    let (ok, out) = curl(dir.path(), &url, false);
    assert!(!ok, "{out}");
    server.shutdown();
}
