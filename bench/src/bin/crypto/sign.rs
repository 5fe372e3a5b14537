//! Signature rows: sign and verify operations per CPU second for RS256 (2048), PS256, ES256
//! and EdDSA on reusable contexts (`SignContext`, `VerifyContext`: set up once per key, as
//! `openssl speed` does), next to `openssl speed rsa2048 ecdsap256 ed25519` in the same run.

use std::hint::black_box;
use std::process::Command;
use std::time::Duration;

use moria_crypto::keys::{PrivateKey, PublicKey, SignAlg};

use crate::{median, thread_cpu_time};

/// The message signed: a 32-byte value, like the digest `openssl speed` signs.
const MESSAGE: &[u8] = &[0x5a; 32];

/// One row: our algorithm, and the `openssl speed` run it is compared with.
struct Row {
    alg: SignAlg,
    key: &'static str,
    speed: &'static str,
    /// Text that starts the result line of `openssl speed`.
    speed_line: &'static str,
    /// Whether the ≥ 0.95 target applies (PS256 has no `openssl speed` twin).
    target: bool,
}

const ROWS: [Row; 4] = [
    Row {
        alg: SignAlg::Rs256,
        key: "rsa-2048",
        speed: "rsa2048",
        speed_line: "rsa 2048 bits",
        target: true,
    },
    Row {
        alg: SignAlg::Ps256,
        key: "rsa-2048",
        speed: "rsa2048",
        speed_line: "rsa 2048 bits",
        target: false,
    },
    Row {
        alg: SignAlg::Es256,
        key: "ecdsa-p256",
        speed: "ecdsap256",
        speed_line: "256 bits ecdsa (nistp256)",
        target: true,
    },
    Row {
        alg: SignAlg::EdDsa,
        key: "ed25519",
        speed: "ed25519",
        speed_line: "253 bits EdDSA (Ed25519)",
        target: true,
    },
];

/// Operations of `op` per CPU second over about `run`.
fn rate(run: Duration, mut op: impl FnMut()) -> f64 {
    op();
    let start = thread_cpu_time();
    let mut ops = 0u64;
    while thread_cpu_time() - start < run {
        for _ in 0..16 {
            op();
        }
        ops += 16;
    }
    ops as f64 / (thread_cpu_time() - start).as_secs_f64()
}

/// (sign/s, verify/s) from `openssl speed -seconds S <alg>`, if the command exists.
fn openssl_speed(alg: &str, line: &str, seconds: u64) -> Option<(f64, f64)> {
    let out = Command::new("openssl")
        .args(["speed", "-seconds", &seconds.to_string(), alg])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let found = text.lines().find(|l| l.trim_start().starts_with(line))?;
    let mut fields = found.split_whitespace().rev();
    let verify = fields.next()?.parse().ok()?;
    let sign = fields.next()?.parse().ok()?;
    Some((sign, verify))
}

/// Prints the signature table; returns the rows that missed the target.
pub fn run(rounds: usize, seconds: u64) -> Vec<String> {
    let run = Duration::from_secs(seconds);
    println!();
    println!("signatures: operations per CPU second; {rounds} rounds, medians");
    println!(
        "{:<14} {:>10} {:>10} {:>12} {:>12} {:>7} {:>7}",
        "algorithm", "sign/s", "verify/s", "openssl s/s", "openssl v/s", "sign", "verify"
    );
    let mut misses = Vec::new();
    for row in ROWS {
        let key = PrivateKey::generate(row.key).expect("catalogue key");
        let public: PublicKey = key.public_key().expect("public key");
        let mut signer = key.sign_context(row.alg).expect("sign context");
        let mut verifier = public.verify_context(row.alg).expect("verify context");
        let signature = signer.sign(MESSAGE).expect("sign");
        let (mut signs, mut verifies, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            signs.push(rate(run, || {
                black_box(signer.sign(MESSAGE).expect("sign"));
            }));
            verifies.push(rate(run, || {
                verifier.verify(MESSAGE, &signature).expect("verify");
            }));
            theirs.extend(openssl_speed(row.speed, row.speed_line, seconds));
        }
        let (sign, verify) = (median(signs), median(verifies));
        let theirs = (!theirs.is_empty()).then(|| {
            (
                median(theirs.iter().map(|t| t.0).collect()),
                median(theirs.iter().map(|t| t.1).collect()),
            )
        });
        let ratios = theirs.map(|(s, v)| (sign / s, verify / v));
        let show =
            |x: Option<f64>, digits: usize| x.map_or("-".into(), |x| format!("{x:.digits$}"));
        println!(
            "{:<14} {:>10.0} {:>10.0} {:>12} {:>12} {:>7} {:>7}",
            format!("{} {}", row.alg, row.key),
            sign,
            verify,
            show(theirs.map(|t| t.0), 0),
            show(theirs.map(|t| t.1), 0),
            show(ratios.map(|r| r.0), 3),
            show(ratios.map(|r| r.1), 3),
        );
        if let Some((s, v)) = ratios.filter(|&(s, v)| row.target && (s < 0.95 || v < 0.95)) {
            misses.push(format!("{} (sign {s:.3}, verify {v:.3})", row.alg));
        }
    }
    misses
}
