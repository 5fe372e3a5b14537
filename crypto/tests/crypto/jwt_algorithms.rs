//! JWT with every signature algorithm, algorithm pinning (no `alg` switching, no HS256 with
//! a public key as the secret), and a JWKS document holding the keys of a provider whose
//! tokens are signed by the `openssl` command.

use crate::common::cli;

use std::fs;

use moria_crypto::encoding::{base64url, from_base64url};
use moria_crypto::jwt::{Jwks, JwtKey, Validation};
use moria_crypto::keys::{PrivateKey, SignAlg};
use moria_crypto::Error;
use openssl::bn::BigNumContext;
use openssl::ec::PointConversionForm;
use openssl::pkey::{Id, PKey};
use serde_json::{json, Value};

const EXP: u64 = 4_000_000_000;

fn key_for(alg: SignAlg) -> PrivateKey {
    PrivateKey::generate(match alg {
        SignAlg::Es256 => "ecdsa-p256",
        SignAlg::Es384 => "ecdsa-p384",
        SignAlg::EdDsa => "ed25519",
        _ => "rsa-2048",
    })
    .unwrap()
}

/// The public JWK of `key` for `alg`, as a provider would publish it.
fn jwk(key: &PrivateKey, alg: SignAlg, kid: &str) -> Value {
    let pkey = PKey::private_key_from_der(&key.to_der().unwrap()).unwrap();
    let mut jwk = match pkey.id() {
        Id::RSA => {
            let rsa = pkey.rsa().unwrap();
            json!({"kty": "RSA", "n": base64url(&rsa.n().to_vec()), "e": base64url(&rsa.e().to_vec())})
        }
        Id::EC => {
            let ec = pkey.ec_key().unwrap();
            let mut ctx = BigNumContext::new().unwrap();
            let point = ec
                .public_key()
                .to_bytes(ec.group(), PointConversionForm::UNCOMPRESSED, &mut ctx)
                .unwrap();
            let half = (point.len() - 1) / 2;
            let crv = if half == 32 { "P-256" } else { "P-384" };
            json!({"kty": "EC", "crv": crv, "x": base64url(&point[1..=half]), "y": base64url(&point[1 + half..])})
        }
        _ => {
            json!({"kty": "OKP", "crv": "Ed25519", "x": base64url(&pkey.raw_public_key().unwrap())})
        }
    };
    jwk["kid"] = json!(kid);
    jwk["alg"] = json!(alg.name());
    jwk["use"] = json!("sig");
    jwk
}

#[test]
fn every_algorithm_signs_and_verifies() {
    for alg in SignAlg::ALL {
        let key = JwtKey::signing(alg, key_for(alg)).unwrap();
        let token = key.sign(&json!({"sub": "balin", "exp": EXP})).unwrap();
        let header = from_base64url(token.split('.').next().unwrap()).unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&header).unwrap()["alg"],
            alg.name()
        );
        let verifier = JwtKey::verifying(alg, key.public_key().unwrap()).unwrap();
        let claims = verifier.verify(&token, &Validation::new()).unwrap();
        assert_eq!(claims["sub"], "balin", "{alg}");
        let mut forged = token.clone();
        forged.replace_range(forged.len() - 4.., "AAAA");
        assert!(
            matches!(
                verifier.verify(&forged, &Validation::new()),
                Err(Error::TokenSignature)
            ),
            "{alg}"
        );
    }
}

#[test]
fn the_algorithm_is_pinned_per_key() {
    let rsa = key_for(SignAlg::Rs256);
    let rs256 = JwtKey::signing(SignAlg::Rs256, rsa.clone()).unwrap();
    let ps256 = JwtKey::verifying(SignAlg::Ps256, rsa.public_key().unwrap()).unwrap();
    let token = rs256.sign(&json!({"exp": EXP})).unwrap();
    assert!(matches!(
        ps256.verify(&token, &Validation::new()),
        Err(Error::TokenAlgorithm {
            expected: "PS256",
            ..
        })
    ));

    // The classic confusion: an HS256 token whose secret is the RSA public key PEM.
    let public_pem = rsa.public_key().unwrap().to_pem().unwrap();
    let mut padded = public_pem.clone();
    padded.resize(padded.len().max(32), b'\n');
    let forger = JwtKey::hs256(&padded).unwrap();
    let forged = forger.sign(&json!({"exp": EXP, "admin": true})).unwrap();
    let verifier = JwtKey::verifying(SignAlg::Rs256, rsa.public_key().unwrap()).unwrap();
    assert!(matches!(
        verifier.verify(&forged, &Validation::new()),
        Err(Error::TokenAlgorithm {
            expected: "RS256",
            ..
        })
    ));
}

#[test]
fn jwks_verifies_tokens_signed_by_openssl_by_kid() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let keys: Vec<(SignAlg, PrivateKey, String)> = [
        SignAlg::Rs256,
        SignAlg::Ps384,
        SignAlg::Es256,
        SignAlg::EdDsa,
    ]
    .into_iter()
    .enumerate()
    .map(|(i, alg)| (alg, key_for(alg), format!("key-{i}")))
    .collect();
    let mut doc: Vec<Value> = keys
        .iter()
        .map(|(alg, key, kid)| jwk(key, *alg, kid))
        .collect();
    doc.push(json!({"kty": "RSA", "use": "enc", "kid": "enc-only", "n": "AQAB", "e": "AQAB"}));
    let jwks = Jwks::from_json(json!({ "keys": doc }).to_string().as_bytes()).unwrap();
    assert_eq!(jwks.len(), 4);

    for (alg, key, kid) in &keys {
        let header = base64url(
            json!({"alg": alg.name(), "kid": kid})
                .to_string()
                .as_bytes(),
        );
        let payload = base64url(
            json!({"iss": "https://idp.example", "exp": EXP})
                .to_string()
                .as_bytes(),
        );
        let input = format!("{header}.{payload}");
        fs::write(dir.join("input"), &input).unwrap();
        fs::write(dir.join("key.pem"), key.to_pem().unwrap()).unwrap();
        let mut args = match alg {
            SignAlg::EdDsa => vec![
                "pkeyutl", "-sign", "-inkey", "key.pem", "-rawin", "-in", "input",
            ],
            SignAlg::Ps384 => vec![
                "dgst",
                "-sha384",
                "-sigopt",
                "rsa_padding_mode:pss",
                "-sigopt",
                "rsa_pss_saltlen:digest",
                "-sigopt",
                "rsa_mgf1_md:sha384",
                "-sign",
                "key.pem",
            ],
            _ => vec!["dgst", "-sha256", "-sign", "key.pem"],
        };
        args.extend(["-out", "sig"]);
        if !matches!(alg, SignAlg::EdDsa) {
            args.push("input");
        }
        cli::openssl(dir, &args);
        let mut signature = fs::read(dir.join("sig")).unwrap();
        if *alg == SignAlg::Es256 {
            let sig = openssl::ecdsa::EcdsaSig::from_der(&signature).unwrap();
            signature = sig.r().to_vec_padded(32).unwrap();
            signature.extend(sig.s().to_vec_padded(32).unwrap());
        }
        let token = format!("{input}.{}", base64url(&signature));
        let v = Validation::new().issuer("https://idp.example");
        assert_eq!(
            jwks.verify(&token, &v).unwrap()["iss"],
            "https://idp.example",
            "{alg}"
        );
    }

    let stranger = JwtKey::signing(SignAlg::Es256, key_for(SignAlg::Es256))
        .unwrap()
        .with_kid("key-2");
    let token = stranger.sign(&json!({"exp": EXP})).unwrap();
    assert!(matches!(
        jwks.verify(&token, &Validation::new()),
        Err(Error::TokenSignature)
    ));
    let unknown = stranger
        .with_kid("key-9")
        .sign(&json!({"exp": EXP}))
        .unwrap();
    assert!(matches!(
        jwks.verify(&unknown, &Validation::new()),
        Err(Error::TokenMalformed(_))
    ));
}

#[test]
fn bad_jwks_documents_have_reasons() {
    for (doc, needle) in [
        (&b"not json"[..], "JWKS"),
        (br#"{"nokeys": []}"#, "keys"),
        (
            br#"{"keys": [{"kty": "EC", "crv": "P-256", "x": "AQ", "y": "AQ", "kid": "a"}]}"#,
            "curve",
        ),
        (
            br#"{"keys": [{"kty": "oct", "k": "AQ", "kid": "a"}]}"#,
            "kty",
        ),
        (
            br#"{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "AQ"}]}"#,
            "Ed25519",
        ),
        (
            br#"{"keys": [{"kty": "RSA", "n": "AQAB", "e": "AQAB", "kid": "a"}]}"#,
            "bits",
        ),
    ] {
        match Jwks::from_json(doc) {
            Err(e @ (Error::MalformedKey(_) | Error::WeakKey { .. })) => {
                assert!(e.to_string().contains(needle), "{e}")
            }
            other => panic!("{}: {other:?}", String::from_utf8_lossy(doc)),
        }
    }
}
