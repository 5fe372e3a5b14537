//! Published vectors for the catalogue's hashes (FIPS 180-4 examples, FIPS 202, RFC 1321) and
//! HMACs (RFC 4231, RFC 2202), checked through the by-name API and the streaming hashers.

use std::io::Write;

use moria_crypto::encoding::{from_hex, hex};
use moria_crypto::{hash, hmac, HashWriter, Hasher};

const ABC: &str = "abc";
const TWO_BLOCK: &str = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
const LONG: &str = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

fn check_hash(name: &str, message: &str, expected: &str) {
    assert_eq!(
        hash(name, message.as_bytes()).unwrap().to_hex(),
        expected,
        "{name}({message:?})"
    );
}

#[test]
fn fips_180_sha1() {
    check_hash("sha1", "", "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    check_hash("sha1", ABC, "a9993e364706816aba3e25717850c26c9cd0d89d");
    check_hash(
        "sha1",
        TWO_BLOCK,
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1",
    );
}

#[test]
fn fips_180_sha2() {
    check_hash(
        "sha256",
        ABC,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    check_hash(
        "sha256",
        TWO_BLOCK,
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
    check_hash(
        "sha384",
        ABC,
        "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
    );
    check_hash(
        "sha384",
        LONG,
        "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712fcc7c71a557e2db966c3e9fa91746039",
    );
    check_hash(
        "sha512",
        ABC,
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
    );
    check_hash(
        "sha512",
        LONG,
        "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909",
    );
}

#[test]
fn fips_180_one_million_a_streamed() {
    // The long-message example, fed through a hash stream in uneven pieces.
    let mut writer = HashWriter::new(std::io::sink(), Hasher::new("sha256").unwrap());
    let a = vec![b'a'; 1_000_000];
    for piece in a.chunks(999) {
        writer.write_all(piece).unwrap();
    }
    assert_eq!(
        writer.hasher_mut().finish().unwrap().to_hex(),
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
    );
}

#[test]
fn fips_202_sha3() {
    check_hash(
        "sha3-256",
        "",
        "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a",
    );
    check_hash(
        "sha3-256",
        ABC,
        "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
    );
    check_hash(
        "sha3-512",
        ABC,
        "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0",
    );
}

#[test]
fn rfc_1321_md5() {
    check_hash("md5", "", "d41d8cd98f00b204e9800998ecf8427e");
    check_hash("md5", ABC, "900150983cd24fb0d6963f7d28e17f72");
    check_hash("md5", "message digest", "f96b697d7cb7938d525a2f31aaf161d0");
}

fn check_hmac(name: &str, key: &[u8], data: &[u8], expected: &str) {
    assert_eq!(hex(&hmac(name, key, data).unwrap()), expected, "{name}");
}

#[test]
fn rfc_4231_hmac_sha2() {
    let key1 = [0x0b; 20];
    check_hmac(
        "hmac-sha256",
        &key1,
        b"Hi There",
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
    );
    check_hmac(
        "hmac-sha384",
        &key1,
        b"Hi There",
        "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6",
    );
    check_hmac(
        "hmac-sha512",
        &key1,
        b"Hi There",
        "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854",
    );
    let jefe = b"what do ya want for nothing?";
    check_hmac(
        "hmac-sha256",
        b"Jefe",
        jefe,
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
    check_hmac(
        "hmac-sha512",
        b"Jefe",
        jefe,
        "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737",
    );
    // Test cases 6 and 7: keys longer than the block size.
    let big_key = [0xaa; 131];
    check_hmac(
        "hmac-sha256",
        &big_key,
        b"Test Using Larger Than Block-Size Key - Hash Key First",
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
    );
    check_hmac(
        "hmac-sha256",
        &big_key,
        b"This is a test using a larger than block-size key and a larger than block-size data. \
The key needs to be hashed before being used by the HMAC algorithm.",
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
    );
}

#[test]
fn rfc_2202_hmac_sha1_md5() {
    check_hmac(
        "hmac-sha1",
        &[0x0b; 20],
        b"Hi There",
        "b617318655057264e28bc0b6fb378c8ef146be00",
    );
    check_hmac(
        "hmac-md5",
        &[0x0b; 16],
        b"Hi There",
        "9294727a3638bb1c13f48ef8158bfc9d",
    );
    check_hmac(
        "hmac-sha1",
        b"Jefe",
        b"what do ya want for nothing?",
        "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79",
    );
}

#[test]
fn hmac_verify_is_constant_time_compare_of_the_vector() {
    let mut mac = moria_crypto::Hmac::new("hmac-sha256", b"Jefe").unwrap();
    mac.update(b"what do ya ").unwrap();
    mac.update(b"want for nothing?").unwrap();
    let tag = from_hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843").unwrap();
    assert!(mac.verify(&tag).unwrap());
}
