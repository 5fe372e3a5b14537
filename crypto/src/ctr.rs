//! Stream ciphers by name (`aes-128-ctr`, `aes-256-ctr`): a keystream XORed over the data, the
//! same operation both ways. No integrity: pair with an HMAC or use an AEAD.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use openssl::cipher::{Cipher, CipherRef};
use openssl::cipher_ctx::CipherCtx;

use crate::error::{check_len, Error, Result};
use crate::lookup::lookup;

/// IV (initial counter block) size of the catalogue's CTR ciphers.
pub const CTR_IV_LEN: usize = 16;

/// A stream cipher of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CtrAlg {
    /// AES-128 in counter mode.
    Aes128Ctr,
    /// AES-256 in counter mode.
    Aes256Ctr,
}

const TABLE: [(&str, CtrAlg); 2] = [
    ("aes-128-ctr", CtrAlg::Aes128Ctr),
    ("aes-256-ctr", CtrAlg::Aes256Ctr),
];

impl CtrAlg {
    /// Every stream cipher of the catalogue.
    pub const ALL: [CtrAlg; 2] = [CtrAlg::Aes128Ctr, CtrAlg::Aes256Ctr];

    /// The cipher called `name`, or an error listing the valid names.
    pub fn from_name(name: &str) -> Result<Self> {
        lookup("cipher", &TABLE, name)
    }

    /// The catalogue name.
    pub fn name(self) -> &'static str {
        TABLE[self as usize].0
    }

    /// Key size in bytes.
    pub fn key_len(self) -> usize {
        match self {
            CtrAlg::Aes128Ctr => 16,
            CtrAlg::Aes256Ctr => 32,
        }
    }

    fn cipher(self) -> &'static CipherRef {
        static FETCHED: [OnceLock<Option<Cipher>>; 2] = [const { OnceLock::new() }; 2];
        let fetched =
            FETCHED[self as usize].get_or_init(|| Cipher::fetch(None, self.name(), None).ok());
        match fetched {
            Some(cipher) => cipher,
            None => match self {
                CtrAlg::Aes128Ctr => Cipher::aes_128_ctr(),
                CtrAlg::Aes256Ctr => Cipher::aes_256_ctr(),
            },
        }
    }
}

impl FromStr for CtrAlg {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        CtrAlg::from_name(name)
    }
}

/// A running CTR keystream: successive calls continue where the previous one stopped.
pub struct Ctr {
    alg: CtrAlg,
    ctx: CipherCtx,
}

impl Ctr {
    /// The cipher called `name` with `key` and a 16-byte initial counter block `iv`.
    pub fn new(name: &str, key: &[u8], iv: &[u8]) -> Result<Self> {
        Self::with_alg(CtrAlg::from_name(name)?, key, iv)
    }

    /// The cipher `alg` with `key` and initial counter block `iv`.
    pub fn with_alg(alg: CtrAlg, key: &[u8], iv: &[u8]) -> Result<Self> {
        check_len("key", alg.key_len(), key.len())?;
        check_len("iv", CTR_IV_LEN, iv.len())?;
        let mut ctx = CipherCtx::new()?;
        ctx.encrypt_init(Some(alg.cipher()), Some(key), Some(iv))?;
        Ok(Ctr { alg, ctx })
    }

    /// The algorithm.
    pub fn alg(&self) -> CtrAlg {
        self.alg
    }

    /// Restarts the keystream at counter block `iv`, keeping the key schedule.
    pub fn reset(&mut self, iv: &[u8]) -> Result<()> {
        check_len("iv", CTR_IV_LEN, iv.len())?;
        self.ctx.encrypt_init(None, None, Some(iv))?;
        Ok(())
    }

    /// Replaces the key and the counter block in the same context (no allocation).
    pub(crate) fn rekey(&mut self, key: &[u8], iv: &[u8]) -> Result<()> {
        check_len("key", self.alg.key_len(), key.len())?;
        check_len("iv", CTR_IV_LEN, iv.len())?;
        self.ctx.encrypt_init(None, Some(key), Some(iv))?;
        Ok(())
    }

    /// Encrypts (or decrypts) `data` in place.
    pub fn apply(&mut self, data: &mut [u8]) -> Result<()> {
        self.ctx.cipher_update_inplace(data, data.len())?;
        Ok(())
    }

    /// Encrypts (or decrypts) `input` into `output`, which must be as long.
    pub fn apply_to(&mut self, input: &[u8], output: &mut [u8]) -> Result<()> {
        check_len("output", input.len(), output.len())?;
        self.ctx.cipher_update(input, Some(output))?;
        Ok(())
    }
}

impl fmt::Debug for Ctr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ctr")
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_calls_match_one_call() {
        let key = [3u8; 16];
        let iv = [9u8; 16];
        let mut whole = [0x55u8; 100];
        Ctr::new("aes-128-ctr", &key, &iv)
            .unwrap()
            .apply(&mut whole)
            .unwrap();
        let mut parts = [0x55u8; 100];
        let mut ctr = Ctr::new("aes-128-ctr", &key, &iv).unwrap();
        for chunk in parts.chunks_mut(7) {
            ctr.apply(chunk).unwrap();
        }
        assert_eq!(whole, parts);
        ctr.reset(&iv).unwrap();
        ctr.apply(&mut parts).unwrap();
        assert_eq!(parts, [0x55u8; 100]);
    }

    #[test]
    fn wrong_sizes_error() {
        assert!(matches!(
            Ctr::new("aes-256-ctr", &[0; 16], &[0; 16]),
            Err(Error::InvalidLength { what: "key", .. })
        ));
        assert!(matches!(
            Ctr::new("aes-128-ctr", &[0; 16], &[0; 12]),
            Err(Error::InvalidLength { what: "iv", .. })
        ));
        let mut ctr = Ctr::new("aes-128-ctr", &[0; 16], &[0; 16]).unwrap();
        assert!(matches!(
            ctr.apply_to(&[0; 4], &mut [0; 3]),
            Err(Error::InvalidLength { what: "output", .. })
        ));
    }
}
