//! X.509 against the `openssl` command: a three-level chain and CRLs we make are accepted by
//! `openssl verify -crl_check`, its CSRs are signed by our CA and ours by its `x509 -req`,
//! and our readable print matches its fields.

use crate::common::cli;

use std::fs;
use std::path::Path;
use std::time::SystemTime;

use crate::common::ca::Ca;
use cli::{openssl, openssl_ok};
use moria_crypto::keys::PrivateKey;
use moria_crypto::x509::{CertBuilder, Certificate, Crl, CrlBuilder, Csr, Usage};
use moria_crypto::Error;

fn root_and_intermediate() -> (Ca, Ca) {
    let root = Ca::root_from(
        CertBuilder::new("Moria Root")
            .organization("Khazad-dum")
            .usage(Usage::Ca { path_len: Some(1) }),
        "ecdsa-p384",
    );
    let inter = root.intermediate("Moria Issuing CA", "rsa-2048");
    (root, inter)
}

fn leaf(ca: &Ca, name: &str) -> Certificate {
    ca.issue_with(
        CertBuilder::new(name).hosts(&[name, "127.0.0.1"]),
        "ed25519",
    )
    .0
}

fn write(dir: &Path, file: &str, pem: Vec<u8>) {
    fs::write(dir.join(file), pem).unwrap();
}

#[test]
fn three_level_chain_and_crl_pass_openssl_verify() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (root, inter) = root_and_intermediate();
    let good = leaf(&inter, "good.moria.test");
    let revoked = leaf(&inter, "revoked.moria.test");
    let crl = CrlBuilder::new(&inter.cert)
        .revoke(&revoked, SystemTime::now())
        .sign(&inter.key)
        .unwrap();
    let root_crl = CrlBuilder::new(&root.cert).sign(&root.key).unwrap();
    write(dir, "root.pem", root.cert.to_pem().unwrap());
    write(dir, "inter.pem", inter.cert.to_pem().unwrap());
    write(dir, "good.pem", good.to_pem().unwrap());
    write(dir, "revoked.pem", revoked.to_pem().unwrap());
    let mut crls = crl.to_pem().unwrap();
    crls.extend(root_crl.to_pem().unwrap());
    write(dir, "crls.pem", crls);

    let base = ["verify", "-CAfile", "root.pem", "-untrusted", "inter.pem"];
    let with_crl = [&base[..], &["-crl_check_all", "-CRLfile", "crls.pem"]].concat();
    let (ok, out) = openssl_ok(
        dir,
        &[&with_crl[..], &["-purpose", "sslserver", "good.pem"]].concat(),
    );
    assert!(ok, "{out}");
    let (ok, out) = openssl_ok(dir, &[&with_crl[..], &["revoked.pem"]].concat());
    assert!(!ok && out.contains("certificate revoked"), "{out}");
    let (ok, out) = openssl_ok(
        dir,
        &[&base[..], &["-purpose", "sslclient", "good.pem"]].concat(),
    );
    assert!(
        !ok && out.contains("unsuitable certificate purpose"),
        "{out}"
    );

    let text =
        String::from_utf8(openssl(dir, &["crl", "-in", "crls.pem", "-noout", "-text"])).unwrap();
    assert!(
        text.to_lowercase().contains(&revoked.serial().unwrap()),
        "{text}"
    );
    let back = Crl::from_pem(&crl.to_pem().unwrap()).unwrap();
    assert_eq!(
        back.revoked_serials().unwrap(),
        vec![revoked.serial().unwrap()]
    );
    assert!(back.is_revoked(&revoked) && !back.is_revoked(&good));
    assert!(back.is_signed_by(&inter.cert).unwrap());
    assert!(back.to_string().contains(&revoked.serial().unwrap()));
    assert!(back.next_update().unwrap().unwrap() > back.last_update().unwrap());
}

#[test]
fn readable_print_and_fields() {
    let (root, inter) = root_and_intermediate();
    let cert = leaf(&inter, "print.moria.test");
    assert_eq!(cert.subject(), "CN=print.moria.test");
    assert_eq!(cert.issuer(), "CN=Moria Issuing CA");
    assert_eq!(root.cert.subject(), "CN=Moria Root, O=Khazad-dum");
    assert_eq!(cert.hosts(), vec!["print.moria.test", "127.0.0.1"]);
    let text = cert.to_text().unwrap();
    for needle in [
        "Subject: CN=print.moria.test",
        "TLS Web Server Authentication",
        "CA:FALSE",
        "ED25519",
    ] {
        assert!(text.contains(needle), "{needle} not in {text}");
    }
    assert!(root.cert.to_text().unwrap().contains("CA:TRUE, pathlen:1"));
    assert!(cert.not_after().unwrap() > SystemTime::now());
    assert_eq!(
        Certificate::from_der(&cert.to_der().unwrap()).unwrap(),
        cert
    );
    assert!(matches!(
        Certificate::from_pem(b"junk"),
        Err(Error::InvalidInput { .. })
    ));
}

#[test]
fn csrs_cross_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (root, inter) = root_and_intermediate();
    write(dir, "root.pem", root.cert.to_pem().unwrap());
    write(dir, "inter.pem", inter.cert.to_pem().unwrap());
    write(dir, "inter.key", inter.key.to_pem().unwrap());

    // Theirs, signed by our CA.
    openssl(
        dir,
        &[
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "theirs.key",
            "-subj",
            "/CN=gimli.moria.test/O=Erebor",
            "-out",
            "theirs.csr",
        ],
    );
    let csr = Csr::from_pem(&fs::read(dir.join("theirs.csr")).unwrap()).unwrap();
    assert_eq!(csr.subject(), "CN=gimli.moria.test, O=Erebor");
    let cert = CertBuilder::from_csr(&csr)
        .unwrap()
        .hosts(&["gimli.moria.test"])
        .usage(Usage::TlsClient)
        .issue(&inter.cert, &inter.key)
        .unwrap();
    write(dir, "theirs.pem", cert.to_pem().unwrap());
    let (ok, out) = openssl_ok(
        dir,
        &[
            "verify",
            "-CAfile",
            "root.pem",
            "-untrusted",
            "inter.pem",
            "-purpose",
            "sslclient",
            "theirs.pem",
        ],
    );
    assert!(ok, "{out}");

    // Ours, checked and signed by openssl.
    let key = PrivateKey::generate("ecdsa-p256").unwrap();
    let ours = Csr::new("balin.moria.test", &["balin.moria.test"], &key).unwrap();
    write(dir, "ours.csr", ours.to_pem().unwrap());
    let (ok, out) = openssl_ok(dir, &["req", "-in", "ours.csr", "-verify", "-noout"]);
    assert!(ok, "{out}");
    assert!(ours.to_text().unwrap().contains("DNS:balin.moria.test"));
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "ours.csr",
            "-CA",
            "inter.pem",
            "-CAkey",
            "inter.key",
            "-CAcreateserial",
            "-days",
            "1",
            "-out",
            "signed.pem",
        ],
    );
    let signed = Certificate::from_pem(&fs::read(dir.join("signed.pem")).unwrap()).unwrap();
    assert!(signed.is_signed_by(&inter.cert).unwrap());
    assert_eq!(signed.public_key().unwrap(), key.public_key().unwrap());

    // A request whose signature was altered is refused.
    let mut der = ours.to_der().unwrap();
    let last = der.len() - 3;
    der[last] ^= 1;
    let tampered = Csr::from_der(&der).unwrap();
    assert!(matches!(
        CertBuilder::from_csr(&tampered),
        Err(Error::BadSignature)
    ));
}

#[test]
fn mismatched_issuer_material_is_refused() {
    let (root, inter) = root_and_intermediate();
    let other = leaf(&root, "other.moria.test");
    assert!(matches!(
        CertBuilder::new("x")
            .public_key(other.public_key().unwrap())
            .issue(&inter.cert, &root.key),
        Err(Error::InvalidInput { .. })
    ));
    assert!(matches!(
        CrlBuilder::new(&inter.cert)
            .revoke(&other, SystemTime::now())
            .sign(&inter.key),
        Err(Error::InvalidInput { .. })
    ));
    assert!(matches!(
        CertBuilder::new("x").issue(&inter.cert, &inter.key),
        Err(Error::InvalidInput { .. })
    ));
}
