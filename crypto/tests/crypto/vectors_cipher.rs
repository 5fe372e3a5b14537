//! Published cipher vectors: the GCM specification's test cases (McGrew & Viega, AES-128 and
//! AES-256), RFC 8439 §2.8.2 (ChaCha20-Poly1305), NIST SP 800-38A F.5 (AES-CTR); each also
//! through the streaming `Write` adapters.

use std::io::Write;

use moria_crypto::encoding::{from_hex, hex};
use moria_crypto::{Aead, Ctr, CtrWriter, Error, OpenWriter, SealWriter};

fn h(text: &str) -> Vec<u8> {
    from_hex(text).unwrap()
}

const GCM_P: &str = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72\
1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255";
const GCM_A: &str = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
const GCM_IV: &str = "cafebabefacedbaddecaf888";
const K128: &str = "feffe9928665731c6d6a8f9467308308";
const K256: &str = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308";

/// Seals, checks `ciphertext || tag`, opens it back, and does the same through the writers.
fn check_aead(name: &str, key: &str, iv: &str, aad: &str, plain: &str, cipher: &str, tag: &str) {
    let (key, iv, aad, plain) = (h(key), h(iv), h(aad), h(plain));
    let expected = [h(cipher), h(tag)].concat();
    let mut aead = Aead::new(name, &key).unwrap();
    let sealed = aead.seal(&iv, &aad, &plain).unwrap();
    assert_eq!(hex(&sealed), hex(&expected), "{name} seal");
    assert_eq!(aead.open(&iv, &aad, &sealed).unwrap(), plain, "{name} open");

    let mut writer =
        SealWriter::new(Aead::new(name, &key).unwrap(), &iv, &aad, Vec::new()).unwrap();
    for piece in plain.chunks(7) {
        writer.write_all(piece).unwrap();
    }
    assert_eq!(writer.finish().unwrap(), expected, "{name} SealWriter");
    let mut reader =
        OpenWriter::new(Aead::new(name, &key).unwrap(), &iv, &aad, Vec::new()).unwrap();
    for piece in expected.chunks(5) {
        reader.write_all(piece).unwrap();
    }
    assert_eq!(reader.finish().unwrap(), plain, "{name} OpenWriter");

    let mut forged = expected.clone();
    let last = forged.len() - 1;
    forged[last] ^= 1;
    assert!(matches!(
        aead.open(&iv, &aad, &forged),
        Err(Error::TagMismatch)
    ));
}

#[test]
fn gcm_spec_aes_128() {
    let zero_key = "00000000000000000000000000000000";
    let zero_iv = "000000000000000000000000";
    // Test cases 1 to 4.
    check_aead(
        "aes-128-gcm",
        zero_key,
        zero_iv,
        "",
        "",
        "",
        "58e2fccefa7e3061367f1d57a4e7455a",
    );
    check_aead(
        "aes-128-gcm",
        zero_key,
        zero_iv,
        "",
        "00000000000000000000000000000000",
        "0388dace60b6a392f328c2b971b2fe78",
        "ab6e47d42cec13bdf53a67b21257bddf",
    );
    check_aead(
        "aes-128-gcm",
        K128,
        GCM_IV,
        "",
        GCM_P,
        "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e\
21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
        "4d5c2af327cd64a62cf35abd2ba6fab4",
    );
    check_aead(
        "aes-128-gcm",
        K128,
        GCM_IV,
        GCM_A,
        &GCM_P[..120],
        "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e\
21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
        "5bc94fbc3221a5db94fae95ae7121a47",
    );
}

#[test]
fn gcm_spec_aes_256() {
    let zero_key = "0000000000000000000000000000000000000000000000000000000000000000";
    let zero_iv = "000000000000000000000000";
    // Test cases 13 to 16.
    check_aead(
        "aes-256-gcm",
        zero_key,
        zero_iv,
        "",
        "",
        "",
        "530f8afbc74536b9a963b4f1c4cb738b",
    );
    check_aead(
        "aes-256-gcm",
        zero_key,
        zero_iv,
        "",
        "00000000000000000000000000000000",
        "cea7403d4d606b6e074ec5d3baf39d18",
        "d0d1c8a799996bf0265b98b5d48ab919",
    );
    check_aead(
        "aes-256-gcm",
        K256,
        GCM_IV,
        "",
        GCM_P,
        "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa\
8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
        "b094dac5d93471bdec1a502270e3cc6c",
    );
    check_aead(
        "aes-256-gcm",
        K256,
        GCM_IV,
        GCM_A,
        &GCM_P[..120],
        "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa\
8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
        "76fc6ece0f4e1768cddf8853bb2d551b",
    );
}

#[test]
fn rfc_8439_chacha20_poly1305() {
    let plain = hex(
        b"Ladies and Gentlemen of the class of '99: If I could offer you only one \
tip for the future, sunscreen would be it.",
    );
    check_aead(
        "chacha20-poly1305",
        "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
        "070000004041424344454647",
        "50515253c0c1c2c3c4c5c6c7",
        &plain,
        "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6\
3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36\
92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc\
3ff4def08e4b7a9de576d26586cec64b6116",
        "1ae10b594f09e26a7e902ecbd0600691",
    );
}

const CTR_IV: &str = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
const CTR_P: &str = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51\
30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";

fn check_ctr(name: &str, key: &str, cipher: &str) {
    let (key, iv, plain) = (h(key), h(CTR_IV), h(CTR_P));
    let mut data = plain.clone();
    Ctr::new(name, &key, &iv).unwrap().apply(&mut data).unwrap();
    assert_eq!(hex(&data), cipher, "{name}");
    let mut writer = CtrWriter::new(Ctr::new(name, &key, &iv).unwrap(), Vec::new());
    for piece in h(cipher).chunks(3) {
        writer.write_all(piece).unwrap();
    }
    assert_eq!(writer.into_inner(), plain, "{name} CtrWriter decrypts");
}

#[test]
fn sp_800_38a_aes_ctr() {
    check_ctr(
        "aes-128-ctr",
        "2b7e151628aed2a6abf7158809cf4f3c",
        "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff\
5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee",
    );
    check_ctr(
        "aes-256-ctr",
        "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
        "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5\
2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6",
    );
}
