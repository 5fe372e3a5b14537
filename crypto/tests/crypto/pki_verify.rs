//! `Pki::verify` on a three-level chain loaded from a directory: a good certificate passes
//! (and is cached), and an expired, a not-yet-valid, a revoked, a wrong-purpose and an
//! untrusted certificate are each refused with their own reason.

use std::fs;
use std::time::{Duration, SystemTime};

use crate::common::ca::Ca;
use moria_crypto::pki::{CrlCheck, Pki, Purpose, Rejection};
use moria_crypto::x509::{CertBuilder, Certificate, CrlBuilder, Usage};
use moria_crypto::Error;

const DAY: Duration = Duration::from_secs(86_400);

fn leaf(ca: &Ca, builder: CertBuilder) -> Certificate {
    ca.issue(builder).0
}

fn reason(result: moria_crypto::Result<()>) -> Rejection {
    match result {
        Err(Error::CertificateRefused { reason, detail, .. }) => {
            assert!(!detail.is_empty());
            reason
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn each_failure_has_its_reason() {
    let root = Ca::root("Root");
    let inter = root.intermediate("Issuing CA", "ecdsa-p256");
    let now = SystemTime::now();
    let good = leaf(&inter, CertBuilder::new("good.test"));
    let expired = leaf(
        &inter,
        CertBuilder::new("old.test").valid_between(now - 30 * DAY, now - DAY),
    );
    let early = leaf(
        &inter,
        CertBuilder::new("new.test").valid_between(now + DAY, now + 30 * DAY),
    );
    let revoked = leaf(&inter, CertBuilder::new("revoked.test"));
    let client = leaf(&inter, CertBuilder::new("gimli").usage(Usage::TlsClient));
    let signer = leaf(
        &inter,
        CertBuilder::new("release key").usage(Usage::CodeSigning),
    );
    let crl = CrlBuilder::new(&inter.cert)
        .revoke(&revoked, now - DAY)
        .sign(&inter.key)
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("root.pem"), root.cert.to_pem().unwrap()).unwrap();
    fs::write(dir.path().join("issuing.crt"), inter.cert.to_pem().unwrap()).unwrap();
    fs::write(dir.path().join("issuing.crl"), crl.to_pem().unwrap()).unwrap();
    fs::write(dir.path().join("notes.txt"), b"not read").unwrap();
    let pki = Pki::builder()
        .add_path(dir.path())
        .unwrap()
        .build()
        .unwrap();

    pki.verify(&good, Purpose::TlsServer).unwrap();
    pki.verify(&client, Purpose::TlsClient).unwrap();
    pki.verify(&signer, Purpose::CodeSigning).unwrap();
    pki.verify(&good, Purpose::Any).unwrap();
    assert_eq!(
        reason(pki.verify(&expired, Purpose::TlsServer)),
        Rejection::Expired
    );
    assert_eq!(
        reason(pki.verify(&early, Purpose::TlsServer)),
        Rejection::NotYetValid
    );
    assert_eq!(
        reason(pki.verify(&revoked, Purpose::TlsServer)),
        Rejection::Revoked
    );
    assert_eq!(
        reason(pki.verify(&client, Purpose::TlsServer)),
        Rejection::WrongPurpose
    );
    assert_eq!(
        reason(pki.verify(&good, Purpose::TlsClient)),
        Rejection::WrongPurpose
    );
    assert_eq!(
        reason(pki.verify(&good, Purpose::CodeSigning)),
        Rejection::WrongPurpose
    );

    let stranger = leaf(
        &Ca::root("Other Root").intermediate("Other CA", "ecdsa-p256"),
        CertBuilder::new("x.test"),
    );
    assert_eq!(
        reason(pki.verify(&stranger, Purpose::Any)),
        Rejection::UntrustedIssuer
    );

    // Only successes are cached; a refusal is re-checked every time.
    assert_eq!(pki.cached(), 4);
    pki.verify(&good, Purpose::TlsServer).unwrap();
    assert_eq!(pki.cached(), 4);
    assert_eq!(
        reason(pki.verify(&revoked, Purpose::TlsServer)),
        Rejection::Revoked
    );
}

#[test]
fn chains_need_their_intermediate_and_crls_their_issuers() {
    let root = Ca::root("Root");
    let inter = root.intermediate("Issuing CA", "ecdsa-p256");
    let good = leaf(&inter, CertBuilder::new("good.test"));

    let no_inter = Pki::builder().add_root(&root.cert).build().unwrap();
    assert_eq!(
        reason(no_inter.verify(&good, Purpose::TlsServer)),
        Rejection::UntrustedIssuer
    );

    let mut pem = root.cert.to_pem().unwrap();
    pem.extend(inter.cert.to_pem().unwrap());
    let crl = CrlBuilder::new(&inter.cert).sign(&inter.key).unwrap();
    pem.extend(crl.to_pem().unwrap());
    let all = Pki::builder()
        .add_pem(&pem)
        .unwrap()
        .crl_check(CrlCheck::All)
        .build()
        .unwrap();
    assert_eq!(
        reason(all.verify(&good, Purpose::TlsServer)),
        Rejection::CrlMissing
    );
    let leaf_only = Pki::builder().add_pem(&pem).unwrap().build().unwrap();
    leaf_only.verify(&good, Purpose::TlsServer).unwrap();
    let root_crl = CrlBuilder::new(&root.cert).sign(&root.key).unwrap();
    let with_root_crl = Pki::builder()
        .add_pem(&pem)
        .unwrap()
        .add_crl(root_crl)
        .crl_check(CrlCheck::All)
        .build()
        .unwrap();
    with_root_crl.verify(&good, Purpose::TlsServer).unwrap();
}

#[test]
fn bad_material_is_refused() {
    assert!(matches!(
        Pki::builder().build(),
        Err(Error::InvalidInput { .. })
    ));
    assert!(Pki::builder()
        .add_pem(b"-----BEGIN CERTIFICATE-----\nAA\n-----END CERTIFICATE-----\n")
        .is_err());
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("broken.pem"),
        b"-----BEGIN X509 CRL-----\nAA\n",
    )
    .unwrap();
    match Pki::builder().add_path(dir.path()) {
        Err(e) => assert!(e.to_string().contains("broken.pem"), "{e}"),
        Ok(_) => panic!("a broken file was accepted"),
    }
    assert!(Pki::builder()
        .add_path(&dir.path().join("missing.pem"))
        .is_err());
}
