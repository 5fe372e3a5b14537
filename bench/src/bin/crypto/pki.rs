//! The PKI rows: mORMot's "load + is valid" ×10,000 — parse a PEM certificate and verify it
//! against a three-level PKI — without and with the fingerprint cache, and the parse alone
//! (the floor the cache can reach).

use std::time::Duration;

use moria_crypto::keys::PrivateKey;
use moria_crypto::pki::{Pki, Purpose};
use moria_crypto::x509::{CertBuilder, Certificate, Usage};

use crate::{median, thread_cpu_time};

/// Certificates loaded and verified per measurement.
const LOADS: usize = 10_000;

/// A root, an intermediate and a leaf (P-256): the PKI and the leaf's PEM.
fn setup() -> (Pki, Vec<u8>) {
    let root_key = PrivateKey::generate("ecdsa-p256").expect("key");
    let root = CertBuilder::new("Bench Root")
        .usage(Usage::Ca { path_len: None })
        .self_signed(&root_key)
        .expect("root");
    let inter_key = PrivateKey::generate("ecdsa-p256").expect("key");
    let inter = CertBuilder::new("Bench Issuing CA")
        .usage(Usage::Ca { path_len: Some(0) })
        .public_key(inter_key.public_key().expect("public"))
        .issue(&root, &root_key)
        .expect("intermediate");
    let leaf_key = PrivateKey::generate("ecdsa-p256").expect("key");
    let leaf = CertBuilder::new("bench.moria.test")
        .public_key(leaf_key.public_key().expect("public"))
        .issue(&inter, &inter_key)
        .expect("leaf");
    let pki = Pki::builder()
        .add_root(&root)
        .add_intermediate(&inter)
        .build()
        .expect("pki");
    (pki, leaf.to_pem().expect("pem"))
}

/// What each of the [`LOADS`] operations does after parsing.
#[derive(Clone, Copy)]
enum Check {
    None,
    Uncached,
    Cached,
}

/// CPU time of [`LOADS`] parse (and verify) operations.
fn loads(pki: &Pki, pem: &[u8], check: Check) -> Duration {
    let start = thread_cpu_time();
    for _ in 0..LOADS {
        let cert = Certificate::from_pem(pem).expect("parse");
        match check {
            Check::None => {}
            Check::Uncached => pki
                .verify_uncached(&cert, Purpose::TlsServer)
                .expect("verify"),
            Check::Cached => pki.verify(&cert, Purpose::TlsServer).expect("verify"),
        }
    }
    thread_cpu_time() - start
}

/// Prints the PKI table.
pub fn run(rounds: usize) {
    let (pki, pem) = setup();
    println!();
    println!(
        "PKI load + verify x{LOADS} (PEM parse + chain of 3, P-256); {rounds} rounds, medians"
    );
    println!("{:<22} {:>10} {:>12}", "operation", "total ms", "per op us");
    for (name, check) in [
        ("load + verify", Check::Uncached),
        ("load + verify, cached", Check::Cached),
        ("load only", Check::None),
    ] {
        let secs = median(
            (0..rounds)
                .map(|_| loads(&pki, &pem, check).as_secs_f64())
                .collect(),
        );
        println!(
            "{:<22} {:>10.1} {:>12.2}",
            name,
            secs * 1e3,
            secs * 1e6 / LOADS as f64
        );
    }
}
