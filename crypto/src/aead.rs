//! AEAD ciphers by name (`aes-128-gcm`, `aes-256-gcm`, `chacha20-poly1305`) on reusable
//! OpenSSL contexts: the key schedule is computed once per key, each message only sets its nonce.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;

use crate::error::{check_len, Error, Result};
use crate::lookup::lookup;

/// Nonce size of every catalogue AEAD (96 bits).
pub const NONCE_LEN: usize = 12;
/// Tag size of every catalogue AEAD (128 bits).
pub const TAG_LEN: usize = 16;

/// An AEAD algorithm of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AeadAlg {
    /// AES-128 in Galois/Counter Mode.
    Aes128Gcm,
    /// AES-256 in Galois/Counter Mode.
    Aes256Gcm,
    /// ChaCha20-Poly1305 (RFC 8439).
    ChaCha20Poly1305,
}

const TABLE: [(&str, AeadAlg); 3] = [
    ("aes-128-gcm", AeadAlg::Aes128Gcm),
    ("aes-256-gcm", AeadAlg::Aes256Gcm),
    ("chacha20-poly1305", AeadAlg::ChaCha20Poly1305),
];

impl AeadAlg {
    /// Every AEAD of the catalogue.
    pub const ALL: [AeadAlg; 3] = [
        AeadAlg::Aes128Gcm,
        AeadAlg::Aes256Gcm,
        AeadAlg::ChaCha20Poly1305,
    ];

    /// The AEAD called `name`, or an error listing the valid names.
    pub fn from_name(name: &str) -> Result<Self> {
        lookup("aead", &TABLE, name)
    }

    /// The catalogue name.
    pub fn name(self) -> &'static str {
        TABLE[self as usize].0
    }

    /// Key size in bytes.
    pub fn key_len(self) -> usize {
        match self {
            AeadAlg::Aes128Gcm => 16,
            AeadAlg::Aes256Gcm | AeadAlg::ChaCha20Poly1305 => 32,
        }
    }

    fn cipher(self) -> &'static CipherRef {
        static FETCHED: [OnceLock<Option<Cipher>>; 3] = [const { OnceLock::new() }; 3];
        let fetched =
            FETCHED[self as usize].get_or_init(|| Cipher::fetch(None, self.name(), None).ok());
        match fetched {
            Some(cipher) => cipher,
            None => match self {
                AeadAlg::Aes128Gcm => Cipher::aes_128_gcm(),
                AeadAlg::Aes256Gcm => Cipher::aes_256_gcm(),
                AeadAlg::ChaCha20Poly1305 => Cipher::chacha20_poly1305(),
            },
        }
    }
}

impl FromStr for AeadAlg {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        AeadAlg::from_name(name)
    }
}

/// An AEAD cipher with a fixed key. `seal`/`open` take the nonce per message; a nonce must never
/// be used twice with one key.
pub struct Aead {
    alg: AeadAlg,
    enc: AeadSealer,
    dec: AeadOpener,
}

impl Aead {
    /// The AEAD called `name` with `key` (16 bytes for aes-128-gcm, 32 for the others).
    pub fn new(name: &str, key: &[u8]) -> Result<Self> {
        Self::with_alg(AeadAlg::from_name(name)?, key)
    }

    /// The AEAD `alg` with `key`.
    pub fn with_alg(alg: AeadAlg, key: &[u8]) -> Result<Self> {
        Ok(Aead {
            alg,
            enc: AeadSealer::new(alg, key)?,
            dec: AeadOpener::new(alg, key)?,
        })
    }

    /// The algorithm.
    pub fn alg(&self) -> AeadAlg {
        self.alg
    }

    /// Encrypts `data` in place and returns the tag over `aad` and the ciphertext.
    pub fn seal_in_place(
        &mut self,
        nonce: &[u8],
        aad: &[u8],
        data: &mut [u8],
    ) -> Result<[u8; TAG_LEN]> {
        self.enc.start(nonce, aad)?;
        self.enc.ctx.cipher_update_inplace(data, data.len())?;
        self.enc.finish()
    }

    /// Decrypts `data` in place if `tag` authenticates it with `aad`; on a mismatch `data` is
    /// zeroed and the error is [`Error::TagMismatch`].
    pub fn open_in_place(
        &mut self,
        nonce: &[u8],
        aad: &[u8],
        data: &mut [u8],
        tag: &[u8],
    ) -> Result<()> {
        self.dec.start(nonce, aad)?;
        self.dec.ctx.cipher_update_inplace(data, data.len())?;
        let verdict = self.dec.finish(tag);
        if verdict.is_err() {
            data.fill(0);
        }
        verdict
    }

    /// Returns `ciphertext || tag` for `plaintext`.
    pub fn seal(&mut self, nonce: &[u8], aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(plaintext.len() + TAG_LEN);
        out.extend_from_slice(plaintext);
        let tag = self.seal_in_place(nonce, aad, &mut out)?;
        out.extend_from_slice(&tag);
        Ok(out)
    }

    /// Returns the plaintext of `ciphertext || tag`, or [`Error::TagMismatch`].
    pub fn open(&mut self, nonce: &[u8], aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>> {
        let body_len = sealed
            .len()
            .checked_sub(TAG_LEN)
            .ok_or_else(|| Error::InvalidLength {
                what: "sealed message",
                expected: format!("at least {TAG_LEN}"),
                got: sealed.len(),
            })?;
        let (body, tag) = sealed.split_at(body_len);
        let mut out = body.to_vec();
        self.open_in_place(nonce, aad, &mut out, tag)?;
        Ok(out)
    }

    /// The encrypting direction, for incremental messages.
    pub(crate) fn sealer(&mut self) -> &mut AeadSealer {
        &mut self.enc
    }

    /// The decrypting direction, for incremental messages.
    pub(crate) fn opener(&mut self) -> &mut AeadOpener {
        &mut self.dec
    }
}

/// The encrypting direction of an AEAD with a fixed key, one message at a time: `start`,
/// `update`s, `finish`.
pub(crate) struct AeadSealer {
    ctx: CipherCtx,
}

impl AeadSealer {
    /// Encryption under `key` (the key schedule is computed here, once).
    pub(crate) fn new(alg: AeadAlg, key: &[u8]) -> Result<Self> {
        Ok(AeadSealer {
            ctx: keyed(alg, key, ENCRYPT)?,
        })
    }

    /// Starts a message under `nonce` with `aad`.
    pub(crate) fn start(&mut self, nonce: &[u8], aad: &[u8]) -> Result<()> {
        start_message(&mut self.ctx, ENCRYPT, nonce, aad)
    }

    /// Encrypts the next `input` bytes into `output` (same length).
    pub(crate) fn update(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.ctx.cipher_update(input, Some(output))?;
        Ok(())
    }

    /// Ends the message and returns its tag.
    pub(crate) fn finish(&mut self) -> Result<[u8; TAG_LEN]> {
        let mut empty = [0u8; TAG_LEN];
        self.ctx.cipher_final(&mut empty)?;
        let mut tag = [0u8; TAG_LEN];
        self.ctx.tag(&mut tag)?;
        Ok(tag)
    }
}

/// The decrypting direction of an AEAD with a fixed key, one message at a time: `start`,
/// `update`s, `finish` (which checks the tag).
pub(crate) struct AeadOpener {
    ctx: CipherCtx,
}

impl AeadOpener {
    /// Decryption under `key` (the key schedule is computed here, once).
    pub(crate) fn new(alg: AeadAlg, key: &[u8]) -> Result<Self> {
        Ok(AeadOpener {
            ctx: keyed(alg, key, !ENCRYPT)?,
        })
    }

    /// Starts a message under `nonce` with `aad`.
    pub(crate) fn start(&mut self, nonce: &[u8], aad: &[u8]) -> Result<()> {
        start_message(&mut self.ctx, !ENCRYPT, nonce, aad)
    }

    /// Decrypts the next `input` bytes into `output` (same length); unauthenticated until
    /// [`AeadOpener::finish`] succeeds.
    pub(crate) fn update(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        self.ctx.cipher_update(input, Some(output))?;
        Ok(())
    }

    /// Ends the message: checks `tag` ([`Error::TagMismatch`] when it does not match).
    pub(crate) fn finish(&mut self, tag: &[u8]) -> Result<()> {
        check_len("tag", TAG_LEN, tag.len())?;
        self.ctx.set_tag(tag)?;
        let mut empty = [0u8; TAG_LEN];
        self.ctx
            .cipher_final(&mut empty)
            .map(drop)
            .map_err(|_| Error::TagMismatch)
    }
}

/// The direction flag of [`keyed`] and [`start_message`] for encryption.
const ENCRYPT: bool = true;

/// Initialises `ctx` for encryption or decryption with whichever of cipher, key and nonce are
/// given (the others kept).
fn init(
    ctx: &mut CipherCtx,
    encrypt: bool,
    cipher: Option<&CipherRef>,
    key: Option<&[u8]>,
    nonce: Option<&[u8]>,
) -> Result<()> {
    if encrypt {
        ctx.encrypt_init(cipher, key, nonce)?;
    } else {
        ctx.decrypt_init(cipher, key, nonce)?;
    }
    Ok(())
}

/// A context for `alg` under `key`, encrypting or decrypting.
fn keyed(alg: AeadAlg, key: &[u8], encrypt: bool) -> Result<CipherCtx> {
    check_len("key", alg.key_len(), key.len())?;
    let mut ctx = CipherCtx::new()?;
    init(&mut ctx, encrypt, Some(alg.cipher()), Some(key), None)?;
    Ok(ctx)
}

/// Starts a message on the keyed `ctx` under `nonce` with `aad`.
fn start_message(ctx: &mut CipherCtx, encrypt: bool, nonce: &[u8], aad: &[u8]) -> Result<()> {
    check_len("nonce", NONCE_LEN, nonce.len())?;
    init(ctx, encrypt, None, None, Some(nonce))?;
    if !aad.is_empty() {
        ctx.cipher_update(aad, None)?;
    }
    Ok(())
}

impl fmt::Debug for AeadSealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AeadSealer").finish_non_exhaustive()
    }
}

impl fmt::Debug for AeadOpener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AeadOpener").finish_non_exhaustive()
    }
}

impl fmt::Debug for Aead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Aead")
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 32] = [7; 32];
    const NONCE: [u8; NONCE_LEN] = [1; NONCE_LEN];

    #[test]
    fn round_trip_every_alg() {
        for alg in AeadAlg::ALL {
            let mut aead = Aead::with_alg(alg, &KEY[..alg.key_len()]).unwrap();
            let sealed = aead.seal(&NONCE, b"aad", b"hello world").unwrap();
            assert_eq!(sealed.len(), 11 + TAG_LEN);
            assert_eq!(aead.open(&NONCE, b"aad", &sealed).unwrap(), b"hello world");
        }
    }

    #[test]
    fn tampering_is_tag_mismatch() {
        let mut aead = Aead::new("aes-256-gcm", &KEY).unwrap();
        let mut sealed = aead.seal(&NONCE, b"aad", b"hello world").unwrap();
        assert!(matches!(
            aead.open(&NONCE, b"other aad", &sealed),
            Err(Error::TagMismatch)
        ));
        sealed[0] ^= 1;
        assert!(matches!(
            aead.open(&NONCE, b"aad", &sealed),
            Err(Error::TagMismatch)
        ));
    }

    #[test]
    fn failed_open_zeroes_output() {
        let mut aead = Aead::new("chacha20-poly1305", &KEY).unwrap();
        let mut data = *b"secret message";
        let tag = aead.seal_in_place(&NONCE, b"", &mut data).unwrap();
        let mut bad_tag = tag;
        bad_tag[0] ^= 1;
        let result = aead.open_in_place(&NONCE, b"", &mut data, &bad_tag);
        assert!(matches!(result, Err(Error::TagMismatch)));
        assert_eq!(data, [0u8; 14]);
    }

    #[test]
    fn wrong_sizes_error() {
        assert!(matches!(
            Aead::new("aes-128-gcm", &KEY),
            Err(Error::InvalidLength {
                what: "key",
                got: 32,
                ..
            })
        ));
        let mut aead = Aead::new("aes-128-gcm", &KEY[..16]).unwrap();
        assert!(matches!(
            aead.seal(&[0; 8], b"", b"x"),
            Err(Error::InvalidLength {
                what: "nonce",
                got: 8,
                ..
            })
        ));
        assert!(matches!(
            aead.open(&NONCE, b"", &[0; 5]),
            Err(Error::InvalidLength {
                what: "sealed message",
                got: 5,
                ..
            })
        ));
        let mut data = [0u8; 4];
        assert!(matches!(
            aead.open_in_place(&NONCE, b"", &mut data, &[0; 4]),
            Err(Error::InvalidLength {
                what: "tag",
                got: 4,
                ..
            })
        ));
    }
}
