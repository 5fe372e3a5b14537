//! Hash functions by name (`sha256`, `sha3-512`, ...) on reusable OpenSSL digest contexts.

use std::fmt;
use std::io;
use std::ops::Deref;
use std::str::FromStr;
use std::sync::OnceLock;

use openssl::hash::MessageDigest;
use openssl::md::{Md, MdRef};
use openssl::md_ctx::MdCtx;

use crate::encoding::hex;
use crate::error::{Error, Result};
use crate::lookup::lookup;

/// The largest digest any catalogue hash produces (SHA-512).
pub const MAX_DIGEST_LEN: usize = 64;

/// A hash algorithm of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HashAlg {
    /// MD5 (broken for signatures; for checksums and legacy protocols only).
    Md5,
    /// SHA-1 (broken for signatures; for legacy protocols only).
    Sha1,
    /// SHA-256.
    Sha256,
    /// SHA-384.
    Sha384,
    /// SHA-512.
    Sha512,
    /// SHA3-256.
    Sha3_256,
    /// SHA3-512.
    Sha3_512,
}

const TABLE: [(&str, HashAlg); 7] = [
    ("md5", HashAlg::Md5),
    ("sha1", HashAlg::Sha1),
    ("sha256", HashAlg::Sha256),
    ("sha384", HashAlg::Sha384),
    ("sha512", HashAlg::Sha512),
    ("sha3-256", HashAlg::Sha3_256),
    ("sha3-512", HashAlg::Sha3_512),
];

impl HashAlg {
    /// Every hash of the catalogue.
    pub const ALL: [HashAlg; 7] = [
        HashAlg::Md5,
        HashAlg::Sha1,
        HashAlg::Sha256,
        HashAlg::Sha384,
        HashAlg::Sha512,
        HashAlg::Sha3_256,
        HashAlg::Sha3_512,
    ];

    /// The hash called `name`, or an error listing the valid names.
    pub fn from_name(name: &str) -> Result<Self> {
        lookup("hash", &TABLE, name)
    }

    /// The catalogue name (`sha3-256`).
    pub fn name(self) -> &'static str {
        TABLE[self as usize].0
    }

    /// Digest size in bytes.
    pub fn output_len(self) -> usize {
        match self {
            HashAlg::Md5 => 16,
            HashAlg::Sha1 => 20,
            HashAlg::Sha256 | HashAlg::Sha3_256 => 32,
            HashAlg::Sha384 => 48,
            HashAlg::Sha512 | HashAlg::Sha3_512 => 64,
        }
    }

    /// The OpenSSL digest, fetched from the provider once per process and then reused
    /// (an unfetched legacy digest would be looked up again on every init).
    pub(crate) fn md(self) -> &'static MdRef {
        static FETCHED: [OnceLock<Option<Md>>; 7] = [const { OnceLock::new() }; 7];
        let fetched =
            FETCHED[self as usize].get_or_init(|| Md::fetch(None, self.name(), None).ok());
        match fetched {
            Some(md) => md,
            None => self.legacy_md(),
        }
    }

    fn legacy_md(self) -> &'static MdRef {
        match self {
            HashAlg::Md5 => Md::md5(),
            HashAlg::Sha1 => Md::sha1(),
            HashAlg::Sha256 => Md::sha256(),
            HashAlg::Sha384 => Md::sha384(),
            HashAlg::Sha512 => Md::sha512(),
            HashAlg::Sha3_256 => Md::sha3_256(),
            HashAlg::Sha3_512 => Md::sha3_512(),
        }
    }

    /// The same digest in the older `MessageDigest` form some OpenSSL APIs take.
    pub(crate) fn message_digest(self) -> MessageDigest {
        match self {
            HashAlg::Md5 => MessageDigest::md5(),
            HashAlg::Sha1 => MessageDigest::sha1(),
            HashAlg::Sha256 => MessageDigest::sha256(),
            HashAlg::Sha384 => MessageDigest::sha384(),
            HashAlg::Sha512 => MessageDigest::sha512(),
            HashAlg::Sha3_256 => MessageDigest::sha3_256(),
            HashAlg::Sha3_512 => MessageDigest::sha3_512(),
        }
    }
}

impl FromStr for HashAlg {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        HashAlg::from_name(name)
    }
}

impl fmt::Display for HashAlg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A digest or MAC value, held inline (no allocation).
#[derive(Clone, Copy)]
pub struct Digest {
    bytes: [u8; MAX_DIGEST_LEN],
    len: usize,
}

impl Digest {
    /// Wraps the first `len` bytes of `bytes`.
    pub(crate) fn new(bytes: [u8; MAX_DIGEST_LEN], len: usize) -> Self {
        Digest { bytes, len }
    }

    /// Lowercase hex of the value.
    pub fn to_hex(&self) -> String {
        hex(self)
    }
}

impl Deref for Digest {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl AsRef<[u8]> for Digest {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl PartialEq for Digest {
    /// Compares in constant time, since digests are often MACs.
    fn eq(&self, other: &Self) -> bool {
        crate::ct::constant_time_eq(self, other)
    }
}

impl Eq for Digest {}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({})", self.to_hex())
    }
}

/// An incremental hash whose context is reused after each [`Hasher::finish`].
pub struct Hasher {
    alg: HashAlg,
    ctx: MdCtx,
    /// Whether data was fed since the last (re)initialisation.
    fed: bool,
}

impl Hasher {
    /// A hasher for the algorithm called `name`.
    pub fn new(name: &str) -> Result<Self> {
        Self::with_alg(HashAlg::from_name(name)?)
    }

    /// A hasher for `alg`.
    pub fn with_alg(alg: HashAlg) -> Result<Self> {
        let mut ctx = MdCtx::new()?;
        ctx.digest_init(alg.md())?;
        Ok(Hasher {
            alg,
            ctx,
            fed: false,
        })
    }

    /// The algorithm this hasher computes.
    pub fn alg(&self) -> HashAlg {
        self.alg
    }

    /// Feeds `data` into the hash.
    pub fn update(&mut self, data: &[u8]) -> Result<()> {
        self.fed = true;
        self.ctx.digest_update(data)?;
        Ok(())
    }

    /// Returns the digest of everything fed so far and starts over.
    pub fn finish(&mut self) -> Result<Digest> {
        let mut bytes = [0u8; MAX_DIGEST_LEN];
        let len = self.ctx.digest_final(&mut bytes)?;
        self.ctx.digest_init(self.alg.md())?;
        self.fed = false;
        Ok(Digest::new(bytes, len))
    }

    /// Hashes `data` alone (discarding anything fed before) and starts over.
    pub fn digest(&mut self, data: &[u8]) -> Result<Digest> {
        if self.fed {
            self.ctx.digest_init(self.alg.md())?;
        }
        self.update(data)?;
        self.finish()
    }
}

impl io::Write for Hasher {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.update(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl fmt::Debug for Hasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hasher").field("alg", &self.alg).finish()
    }
}

/// The digest of `data` under the hash called `name`.
pub fn hash(name: &str, data: &[u8]) -> Result<Digest> {
    Hasher::new(name)?.digest(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for alg in HashAlg::ALL {
            assert_eq!(HashAlg::from_name(alg.name()).unwrap(), alg);
            assert_eq!(alg.md().size(), alg.output_len(), "{alg}");
        }
    }

    #[test]
    fn finish_resets_for_reuse() {
        let mut h = Hasher::new("sha256").unwrap();
        h.update(b"abc").unwrap();
        let first = h.finish().unwrap();
        h.update(b"abc").unwrap();
        assert_eq!(h.finish().unwrap(), first);
        assert_eq!(h.digest(b"abc").unwrap(), first);
        h.update(b"junk").unwrap();
        assert_eq!(
            h.digest(b"abc").unwrap(),
            first,
            "digest discards earlier input"
        );
    }

    #[test]
    fn unknown_hash_errors() {
        assert!(matches!(
            hash("sha0", b""),
            Err(Error::UnknownAlgorithm { kind: "hash", .. })
        ));
    }
}
