//! Published KDF vectors: RFC 6070 (PBKDF2-HMAC-SHA1), RFC 7914 §11 (PBKDF2-HMAC-SHA256),
//! RFC 5869 (HKDF).

use moria_crypto::encoding::hex;
use moria_crypto::{hkdf, pbkdf2};

fn check_pbkdf2(name: &str, password: &[u8], salt: &[u8], rounds: u32, expected: &str) {
    let mut out = vec![0u8; expected.len() / 2];
    pbkdf2(name, password, salt, rounds, &mut out).unwrap();
    assert_eq!(hex(&out), expected, "{name} c={rounds}");
}

#[test]
fn rfc_6070_pbkdf2_sha1() {
    let name = "pbkdf2-sha1";
    check_pbkdf2(
        name,
        b"password",
        b"salt",
        1,
        "0c60c80f961f0e71f3a9b524af6012062fe037a6",
    );
    check_pbkdf2(
        name,
        b"password",
        b"salt",
        2,
        "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957",
    );
    check_pbkdf2(
        name,
        b"password",
        b"salt",
        4096,
        "4b007901b765489abead49d926f721d065a429c1",
    );
    check_pbkdf2(
        name,
        b"passwordPASSWORDpassword",
        b"saltSALTsaltSALTsaltSALTsaltSALTsalt",
        4096,
        "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038",
    );
    check_pbkdf2(
        name,
        b"pass\0word",
        b"sa\0lt",
        4096,
        "56fa6aa75548099dcc37d7f03425e0c3",
    );
}

#[test]
fn rfc_7914_pbkdf2_sha256() {
    check_pbkdf2(
        "pbkdf2-sha256",
        b"passwd",
        b"salt",
        1,
        "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc\
49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783",
    );
    check_pbkdf2(
        "pbkdf2-sha256",
        b"Password",
        b"NaCl",
        80000,
        "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56\
a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d",
    );
}

fn check_hkdf(name: &str, ikm: &[u8], salt: &[u8], info: &[u8], expected: &str) {
    let mut okm = vec![0u8; expected.len() / 2];
    hkdf(name, ikm, salt, info, &mut okm).unwrap();
    assert_eq!(hex(&okm), expected, "{name}");
}

fn range(from: u8, to: u8) -> Vec<u8> {
    (from..=to).collect()
}

#[test]
fn rfc_5869_hkdf_sha256() {
    let ikm = [0x0b; 22];
    check_hkdf(
        "hkdf-sha256",
        &ikm,
        &range(0x00, 0x0c),
        &range(0xf0, 0xf9),
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
    );
    check_hkdf(
        "hkdf-sha256",
        &range(0x00, 0x4f),
        &range(0x60, 0xaf),
        &range(0xb0, 0xff),
        "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c\
59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71\
cc30c58179ec3e87c14c01d5c1f3434f1d87",
    );
    check_hkdf(
        "hkdf-sha256",
        &ikm,
        b"",
        b"",
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
    );
}

#[test]
fn rfc_5869_hkdf_sha1() {
    check_hkdf(
        "hkdf-sha1",
        &[0x0b; 11],
        &range(0x00, 0x0c),
        &range(0xf0, 0xf9),
        "085a01ea1b10f36933068b56efa5ad81a4f14b822f5b091568a9cdd4f155fda2c22e422478d305f3f896",
    );
}
