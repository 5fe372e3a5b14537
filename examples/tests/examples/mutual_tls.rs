//! Mutual TLS, checked with curl: an HTTPS listener whose acceptor requires client
//! certificates lets curl with `--cert` reach the handler, which reads the verified certificate
//! from `TlsInfo`, and refuses curl without one; `fileserver --client-ca` serves a file to curl
//! presenting a certificate from that CA, and refuses curl without one.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use moria_crypto::keys::PrivateKey;
use moria_crypto::pki::Pki;
use moria_crypto::x509::{CertBuilder, Certificate, Usage};
use moria_crypto::{Identity, TlsAcceptor};
use moria_http::{HandlerResult, Request, Response, Server};

/// A client CA and what it issued (a server certificate for 127.0.0.1 and a client
/// certificate), written as PEM files into a directory of their own: `ca.pem`, `server.pem`
/// with `server.key`, `client.pem` with `client.key`.
struct ClientCa {
    dir: tempfile::TempDir,
    ca: Certificate,
    server: (Certificate, PrivateKey),
}

impl ClientCa {
    /// A fresh CA, a server certificate and a client certificate for `client`.
    fn new(client: &str) -> ClientCa {
        let dir = tempfile::tempdir().unwrap();
        let ca_key = PrivateKey::generate("ecdsa-p256").unwrap();
        let ca = CertBuilder::new("Client CA")
            .usage(Usage::Ca { path_len: None })
            .self_signed(&ca_key)
            .unwrap();
        fs::write(dir.path().join("ca.pem"), ca.to_pem().unwrap()).unwrap();
        let issue = |name: &str, builder: CertBuilder| {
            let key = PrivateKey::generate("ecdsa-p256").unwrap();
            let cert = builder
                .public_key(key.public_key().unwrap())
                .issue(&ca, &ca_key)
                .unwrap();
            let pem = |ext: &str| dir.path().join(format!("{name}.{ext}"));
            fs::write(pem("pem"), cert.to_pem().unwrap()).unwrap();
            fs::write(pem("key"), key.to_pem().unwrap()).unwrap();
            (cert, key)
        };
        let server = issue(
            "server",
            CertBuilder::new("localhost").hosts(&["127.0.0.1"]),
        );
        issue("client", CertBuilder::new(client).usage(Usage::TlsClient));
        ClientCa { dir, ca, server }
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Fetches `url` with curl trusting the CA, presenting the client certificate if `cert`;
    /// whether curl succeeded, and what it wrote (stdout, then stderr).
    fn curl(&self, url: &str, cert: bool) -> (bool, String) {
        let mut cmd = Command::new("curl");
        cmd.current_dir(self.dir())
            .args(["-sS", "--max-time", "30", "--cacert", "ca.pem"]);
        if cert {
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
}

fn whoami(req: &mut Request<'_>, res: &mut Response) -> HandlerResult {
    let subject = req
        .tls()
        .and_then(|t| t.peer_certificate.as_ref())
        .map_or_else(|| "anonymous".to_string(), |c| c.subject());
    res.body(subject);
    Ok(())
}

#[test]
fn handler_sees_the_verified_client_certificate() {
    let certs = ClientCa::new("dwalin");
    let pki = Pki::builder().add_root(&certs.ca).build().unwrap();
    let (server_cert, server_key) = &certs.server;
    let acceptor = TlsAcceptor::builder(Identity::new(server_cert, &[], server_key).unwrap())
        .client_auth(&pki)
        .build()
        .unwrap();
    let server = Server::builder()
        .listen_tls("127.0.0.1:0", acceptor)
        .start(whoami)
        .unwrap();
    let url = format!("https://127.0.0.1:{}/", server.local_addrs()[0].port());

    let (ok, body) = certs.curl(&url, true);
    assert!(ok, "{body}");
    assert_eq!(body, "CN=dwalin");
    let (ok, out) = certs.curl(&url, false);
    assert!(!ok, "{out}");
    server.shutdown();
}

/// Kills the server when the test ends, passing or not.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn client_ca_flag_requires_a_client_certificate() {
    let certs = ClientCa::new("ori");
    let dir = certs.dir();
    let www = dir.join("www");
    fs::create_dir(&www).unwrap();
    fs::write(www.join("hello.txt"), b"mellon").unwrap();

    let child = Command::new(env!("CARGO_BIN_EXE_fileserver"))
        .current_dir(dir)
        .args([
            "--root",
            "www",
            "--http",
            "127.0.0.1:0",
            "--https",
            "127.0.0.1:0",
        ])
        .args([
            "--cert",
            "server.pem",
            "--key",
            "server.key",
            "--client-ca",
            "ca.pem",
        ])
        .args(["--workers", "1"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut server = Running(child);
    let mut banner = String::new();
    let stdout = server.0.stdout.take().unwrap();
    BufReader::new(stdout).read_line(&mut banner).unwrap();
    let https = banner
        .split_whitespace()
        .find(|w| w.starts_with("https://"))
        .unwrap_or_else(|| panic!("no https URL in {banner:?}"))
        .trim_end_matches(';')
        .to_owned();

    let (ok, body) = certs.curl(&format!("{https}hello.txt"), true);
    assert!(ok, "{body}");
    assert_eq!(body, "mellon");
    let (ok, out) = certs.curl(&format!("{https}hello.txt"), false);
    assert!(!ok, "{out}");
}
