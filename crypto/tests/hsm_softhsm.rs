//! The HSM path on SoftHSM2 as the real device: a throwaway token is initialised with
//! `softhsm2-util`, keys are generated on it, sign (ECDSA P-256, RSA PKCS#1 v1.5 and PSS) and
//! verify on the token, their signatures pass `openssl dgst -verify`, and they sign a JWT
//! and a CSR that a CA turns into a certificate stored back on the token.
//!
//! Its own test binary, not a module of `tests/crypto`: SoftHSM reads its configuration from
//! the `SOFTHSM2_CONF` environment variable, which this test sets for the whole process (the
//! module loaded in-process reads it at `C_Initialize`, which happens once per process).
//! Setting an environment variable while other tests' threads run (and spawn `openssl`) is a
//! data race, and no other test may see that variable.

#[path = "crypto/common/cli.rs"]
mod cli;

use std::fs;
use std::path::{Path, PathBuf};

use moria_crypto::hsm::{Hsm, TokenSlot};
use moria_crypto::jwt::{sign_with, JwtKey, SignerKey, Validation};
use moria_crypto::keys::{KeyKind, PrivateKey, SignAlg, Signer};
use moria_crypto::x509::{CertBuilder, Csr, Usage};
use moria_crypto::Error;
use serde_json::json;

const MODULE: &str = "/usr/lib/softhsm/libsofthsm2.so";
const PIN: &str = "5678";

/// A fresh SoftHSM2 configuration with one initialised token labelled `moria`.
fn throwaway_token(dir: &Path) -> PathBuf {
    assert!(
        Path::new(MODULE).exists(),
        "{MODULE} is missing: install the Debian package `softhsm2`"
    );
    let tokens = dir.join("tokens");
    fs::create_dir(&tokens).unwrap();
    let conf = dir.join("softhsm2.conf");
    fs::write(
        &conf,
        format!(
            "directories.tokendir = {}\nobjectstore.backend = file\nlog.level = ERROR\n",
            tokens.display()
        ),
    )
    .unwrap();
    // SoftHSM reads its configuration from this variable, in the tool and in this process
    // (at C_Initialize); this binary holds the only test that loads the module.
    std::env::set_var("SOFTHSM2_CONF", &conf);
    let out = cli::run(
        "softhsm2-util",
        "softhsm2",
        dir,
        &[
            "--init-token",
            "--free",
            "--label",
            "moria",
            "--so-pin",
            "1234",
            "--pin",
            PIN,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(MODULE)
}

#[test]
fn keys_on_softhsm_sign_verify_jwt_and_csr() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let module = throwaway_token(dir);

    let wrong = Hsm::open(&module, &TokenSlot::Label("moria".into()), "0000");
    assert!(
        matches!(wrong, Err(Error::Hsm(ref m)) if m.contains("PIN is incorrect")),
        "{wrong:?}"
    );
    assert!(matches!(
        Hsm::open(&module, &TokenSlot::Label("mordor".into()), PIN),
        Err(Error::Hsm(_))
    ));
    assert!(matches!(
        Hsm::open(&dir.join("missing.so"), &TokenSlot::Id(0), PIN),
        Err(Error::Hsm(_))
    ));

    let hsm = Hsm::open(&module, &TokenSlot::Label("moria".into()), PIN).unwrap();
    let ec = hsm.generate("ec-key", KeyKind::EcdsaP256).unwrap();
    let rsa = hsm.generate("rsa-key", KeyKind::Rsa(2048)).unwrap();
    assert!(matches!(
        hsm.generate("x", KeyKind::Ed25519),
        Err(Error::WrongKey { .. })
    ));
    let mut labels: Vec<String> = hsm
        .keys()
        .unwrap()
        .iter()
        .map(|k| k.label().to_owned())
        .collect();
    labels.sort();
    assert_eq!(labels, ["ec-key", "rsa-key"]);
    assert_eq!(hsm.key("rsa-key").unwrap().kind(), KeyKind::Rsa(2048));
    assert!(matches!(hsm.key("nothing"), Err(Error::Hsm(_))));

    fs::write(dir.join("data"), b"signed inside the token").unwrap();
    for (key, alg, dgst) in [
        (&ec, SignAlg::Es256, vec!["-sha256"]),
        (&rsa, SignAlg::Rs256, vec!["-sha256"]),
        (
            &rsa,
            SignAlg::Ps256,
            vec![
                "-sha256",
                "-sigopt",
                "rsa_padding_mode:pss",
                "-sigopt",
                "rsa_pss_saltlen:digest",
            ],
        ),
    ] {
        let signature = key.sign(alg, b"signed inside the token").unwrap();
        key.verify(alg, b"signed inside the token", &signature)
            .unwrap();
        assert!(matches!(
            key.verify(alg, b"something else", &signature),
            Err(Error::BadSignature)
        ));
        let public = key.public_key().unwrap();
        public
            .verify(alg, b"signed inside the token", &signature)
            .unwrap();
        fs::write(dir.join("pub.pem"), public.to_pem().unwrap()).unwrap();
        fs::write(dir.join("sig"), &signature).unwrap();
        let mut args = vec!["dgst"];
        args.extend(dgst);
        args.extend(["-verify", "pub.pem", "-signature", "sig", "data"]);
        cli::openssl(dir, &args);
    }
    assert!(matches!(
        ec.sign(SignAlg::Rs256, b"x"),
        Err(Error::WrongKey { .. })
    ));

    // A JWT signed on the token, verified with its public key.
    let signer = SignerKey::new(&ec, SignAlg::Es256)
        .unwrap()
        .with_kid("hsm-1");
    let token = sign_with(&signer, &json!({"sub": "thorin", "exp": 4_000_000_000u64})).unwrap();
    let verifier = JwtKey::verifying(SignAlg::Es256, ec.public_key().unwrap()).unwrap();
    assert_eq!(
        verifier.verify(&token, &Validation::new()).unwrap()["sub"],
        "thorin"
    );
    assert!(matches!(
        SignerKey::new(&rsa, SignAlg::Es256),
        Err(Error::WrongKey { .. })
    ));

    // A CSR signed on the token, checked by openssl, made a certificate by our CA, stored back.
    let csr = Csr::new_with_signer("hsm.moria.test", &["hsm.moria.test"], &rsa).unwrap();
    fs::write(dir.join("hsm.csr"), csr.to_pem().unwrap()).unwrap();
    let (ok, out) = cli::openssl_ok(dir, &["req", "-in", "hsm.csr", "-verify", "-noout"]);
    assert!(ok, "{out}");
    let ca_key = PrivateKey::generate("ecdsa-p256").unwrap();
    let ca = CertBuilder::new("HSM CA")
        .usage(Usage::Ca { path_len: None })
        .self_signed(&ca_key)
        .unwrap();
    let cert = CertBuilder::from_csr(&csr)
        .unwrap()
        .hosts(&["hsm.moria.test"])
        .issue(&ca, &ca_key)
        .unwrap();
    hsm.store_certificate("rsa-key", &cert).unwrap();
    let stored = hsm.certificates().unwrap();
    assert_eq!(stored, vec![("rsa-key".to_owned(), cert)]);
    let ec_csr = Csr::new_with_signer("ec.moria.test", &[], &ec).unwrap();
    assert_eq!(ec_csr.public_key().unwrap(), ec.public_key().unwrap());
}
