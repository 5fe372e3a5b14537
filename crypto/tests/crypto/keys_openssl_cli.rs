//! Keys and signatures against the `openssl` command, both ways: our signatures checked by
//! `openssl dgst -verify` / `pkeyutl -verify`, its signatures by ours; encrypted PKCS#8,
//! RSA-OAEP and ECDH + HKDF exchanged with it.

use crate::common::cli;

use std::fs;
use std::path::Path;

use cli::openssl;
use moria_crypto::encoding::hex;
use moria_crypto::keys::{PrivateKey, PublicKey, SignAlg};
use moria_crypto::Error;

const DATA: &[u8] = b"The Doors of Durin, Lord of Moria. Speak, friend, and enter.";

/// `openssl dgst` options for a hashed signature algorithm.
fn dgst_args(alg: SignAlg) -> Vec<&'static str> {
    let mut args = vec![match alg.hash().unwrap().name() {
        "sha256" => "-sha256",
        "sha384" => "-sha384",
        _ => "-sha512",
    }];
    if alg.name().starts_with("PS") {
        let mgf1 = match alg {
            SignAlg::Ps256 => "rsa_mgf1_md:sha256",
            SignAlg::Ps384 => "rsa_mgf1_md:sha384",
            _ => "rsa_mgf1_md:sha512",
        };
        args.extend([
            "-sigopt",
            "rsa_padding_mode:pss",
            "-sigopt",
            "rsa_pss_saltlen:digest",
            "-sigopt",
            mgf1,
        ]);
    }
    args
}

fn key_for(alg: SignAlg, rsa: &PrivateKey) -> PrivateKey {
    match alg {
        SignAlg::Es256 => PrivateKey::generate("ecdsa-p256").unwrap(),
        SignAlg::Es384 => PrivateKey::generate("ecdsa-p384").unwrap(),
        SignAlg::EdDsa => PrivateKey::generate("ed25519").unwrap(),
        _ => rsa.clone(),
    }
}

/// Signs `data` with `openssl`, key `key.pem`, into `sig.bin`.
fn openssl_sign(dir: &Path, alg: SignAlg) -> Vec<u8> {
    if alg == SignAlg::EdDsa {
        openssl(
            dir,
            &[
                "pkeyutl", "-sign", "-inkey", "key.pem", "-rawin", "-in", "data", "-out", "sig.bin",
            ],
        );
    } else {
        let mut args = vec!["dgst"];
        args.extend(dgst_args(alg));
        args.extend(["-sign", "key.pem", "-out", "sig.bin", "data"]);
        openssl(dir, &args);
    }
    fs::read(dir.join("sig.bin")).unwrap()
}

/// Whether `openssl` accepts `sig.bin` over `data` under `pub.pem`.
fn openssl_verifies(dir: &Path, alg: SignAlg) -> bool {
    let args = if alg == SignAlg::EdDsa {
        vec![
            "pkeyutl", "-verify", "-pubin", "-inkey", "pub.pem", "-rawin", "-in", "data",
            "-sigfile", "sig.bin",
        ]
    } else {
        let mut args = vec!["dgst"];
        args.extend(dgst_args(alg));
        args.extend(["-verify", "pub.pem", "-signature", "sig.bin", "data"]);
        args
    };
    cli::openssl_ok(dir, &args).0
}

#[test]
fn openssl_verifies_our_signatures_and_we_verify_its() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    fs::write(dir.join("data"), DATA).unwrap();
    let rsa = PrivateKey::generate("rsa-2048").unwrap();
    for alg in SignAlg::ALL {
        let key = key_for(alg, &rsa);
        let public = key.public_key().unwrap();
        fs::write(dir.join("key.pem"), key.to_pem().unwrap()).unwrap();
        fs::write(dir.join("pub.pem"), public.to_pem().unwrap()).unwrap();

        let ours = key.sign(alg, DATA).unwrap();
        fs::write(dir.join("sig.bin"), &ours).unwrap();
        assert!(openssl_verifies(dir, alg), "{alg}: openssl refused ours");
        let mut bad = ours.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        fs::write(dir.join("sig.bin"), &bad).unwrap();
        assert!(!openssl_verifies(dir, alg), "{alg}: openssl took a bad one");

        let theirs = openssl_sign(dir, alg);
        public.verify(alg, DATA, &theirs).unwrap();
        assert!(matches!(
            public.verify(alg, b"other", &theirs),
            Err(Error::BadSignature)
        ));
    }
}

#[test]
fn keys_made_by_openssl_load_and_ours_load_in_openssl() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    for (algorithm, opts, name) in [
        ("RSA", vec!["-pkeyopt", "rsa_keygen_bits:3072"], "rsa-3072"),
        (
            "EC",
            vec!["-pkeyopt", "ec_paramgen_curve:P-384"],
            "ecdsa-p384",
        ),
        ("ED25519", vec![], "ed25519"),
        ("X25519", vec![], "x25519"),
    ] {
        let mut args = vec!["genpkey", "-algorithm", algorithm, "-out", "k.pem"];
        args.extend(opts);
        openssl(dir, &args);
        let key = PrivateKey::from_pem(&fs::read(dir.join("k.pem")).unwrap()).unwrap();
        assert_eq!(key.kind().name(), name);
        openssl(
            dir,
            &[
                "pkey", "-in", "k.pem", "-pubout", "-outform", "DER", "-out", "p.der",
            ],
        );
        let public = PublicKey::from_der(&fs::read(dir.join("p.der")).unwrap()).unwrap();
        assert_eq!(public, key.public_key().unwrap());

        openssl(
            dir,
            &[
                "pkcs8",
                "-topk8",
                "-v2",
                "aes-256-cbc",
                "-in",
                "k.pem",
                "-out",
                "enc.pem",
                "-passout",
                "pass:mellon",
            ],
        );
        let enc = fs::read(dir.join("enc.pem")).unwrap();
        let back = PrivateKey::from_pem_encrypted(&enc, b"mellon").unwrap();
        assert_eq!(back.public_key().unwrap(), public);

        fs::write(
            dir.join("ours.pem"),
            key.to_pem_encrypted(b"friend").unwrap(),
        )
        .unwrap();
        openssl(
            dir,
            &[
                "pkey",
                "-in",
                "ours.pem",
                "-passin",
                "pass:friend",
                "-pubout",
                "-out",
                "o.pub",
            ],
        );
        let theirs = PublicKey::from_pem(&fs::read(dir.join("o.pub")).unwrap()).unwrap();
        assert_eq!(theirs, public);
    }
    openssl(
        dir,
        &[
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:1024",
            "-out",
            "weak.pem",
        ],
    );
    assert!(matches!(
        PrivateKey::from_pem(&fs::read(dir.join("weak.pem")).unwrap()),
        Err(Error::WeakKey { bits: 1024, .. })
    ));
}

const OAEP_OPTS: [&str; 6] = [
    "-pkeyopt",
    "rsa_padding_mode:oaep",
    "-pkeyopt",
    "rsa_oaep_md:sha256",
    "-pkeyopt",
    "rsa_mgf1_md:sha256",
];

#[test]
fn rsa_oaep_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let key = PrivateKey::generate("rsa-2048").unwrap();
    fs::write(dir.join("key.pem"), key.to_pem().unwrap()).unwrap();
    fs::write(
        dir.join("pub.pem"),
        key.public_key().unwrap().to_pem().unwrap(),
    )
    .unwrap();

    let sealed = key
        .public_key()
        .unwrap()
        .encrypt_oaep(b"content key")
        .unwrap();
    fs::write(dir.join("sealed"), sealed).unwrap();
    let mut args = vec!["pkeyutl", "-decrypt", "-inkey", "key.pem", "-in", "sealed"];
    args.extend(OAEP_OPTS);
    assert_eq!(openssl(dir, &args), b"content key");

    fs::write(dir.join("plain"), b"another key").unwrap();
    let mut args = vec![
        "pkeyutl", "-encrypt", "-pubin", "-inkey", "pub.pem", "-in", "plain", "-out", "theirs",
    ];
    args.extend(OAEP_OPTS);
    openssl(dir, &args);
    let theirs = fs::read(dir.join("theirs")).unwrap();
    assert_eq!(key.decrypt_oaep(&theirs).unwrap(), b"another key");
}

#[test]
fn ecdh_and_hkdf_match_openssl() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    for name in ["ecdsa-p256", "x25519"] {
        let ours = PrivateKey::generate(name).unwrap();
        let peer = PrivateKey::generate(name).unwrap();
        fs::write(dir.join("a.pem"), ours.to_pem().unwrap()).unwrap();
        fs::write(
            dir.join("b.pub"),
            peer.public_key().unwrap().to_pem().unwrap(),
        )
        .unwrap();
        openssl(
            dir,
            &[
                "pkeyutl", "-derive", "-inkey", "a.pem", "-peerkey", "b.pub", "-out", "z",
            ],
        );
        let shared = hex(&fs::read(dir.join("z")).unwrap());
        let hexkey = format!("hexkey:{shared}");
        let printed = openssl(
            dir,
            &[
                "kdf",
                "-keylen",
                "32",
                "-kdfopt",
                "digest:SHA256",
                "-kdfopt",
                &hexkey,
                "-kdfopt",
                "salt:pepper",
                "-kdfopt",
                "info:moria",
                "HKDF",
            ],
        );
        let expected: String = String::from_utf8(printed)
            .unwrap()
            .trim()
            .replace(':', "")
            .to_ascii_lowercase();
        let mut out = [0u8; 32];
        ours.agree(
            &peer.public_key().unwrap(),
            "hkdf-sha256",
            b"pepper",
            b"moria",
            &mut out,
        )
        .unwrap();
        assert_eq!(hex(&out), expected, "{name}");
    }
}
