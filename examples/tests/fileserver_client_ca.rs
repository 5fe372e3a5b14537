//! `fileserver --client-ca`: HTTPS serves a file to curl presenting a certificate from that
//! CA, and refuses curl without one.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use moria_crypto::keys::PrivateKey;
use moria_crypto::x509::{CertBuilder, Certificate, Usage};

/// Kills the server when the test ends, passing or not.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn write_pair(dir: &Path, name: &str, cert: &Certificate, key: &PrivateKey) {
    fs::write(dir.join(format!("{name}.pem")), cert.to_pem().unwrap()).unwrap();
    fs::write(dir.join(format!("{name}.key")), key.to_pem().unwrap()).unwrap();
}

fn curl(dir: &Path, url: &str, cert: bool) -> (bool, String) {
    let mut cmd = Command::new("curl");
    cmd.current_dir(dir)
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

#[test]
fn client_ca_flag_requires_a_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let ca_key = PrivateKey::generate("ecdsa-p256").unwrap();
    let ca = CertBuilder::new("Client CA")
        .usage(Usage::Ca { path_len: None })
        .self_signed(&ca_key)
        .unwrap();
    fs::write(dir.join("ca.pem"), ca.to_pem().unwrap()).unwrap();
    for (name, builder) in [
        (
            "server",
            CertBuilder::new("localhost").hosts(&["127.0.0.1"]),
        ),
        ("client", CertBuilder::new("ori").usage(Usage::TlsClient)),
    ] {
        let key = PrivateKey::generate("ecdsa-p256").unwrap();
        let cert = builder
            .public_key(key.public_key().unwrap())
            .issue(&ca, &ca_key)
            .unwrap();
        write_pair(dir, name, &cert, &key);
    }
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

    let (ok, body) = curl(dir, &format!("{https}hello.txt"), true);
    assert!(ok, "{body}");
    assert_eq!(body, "mellon");
    let (ok, out) = curl(dir, &format!("{https}hello.txt"), false);
    assert!(!ok, "{out}");
}
