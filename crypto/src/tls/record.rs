//! TLS 1.3 record protection (RFC 8446 §5.2–§5.4, §7.1–§7.3): the part of a TLS 1.3 session
//! that lives on after the handshake. One [`Direction`] per way ([`Sealing`], [`Opening`]): its
//! traffic secret, the key and IV derived from it, the next record's sequence number, and an
//! AEAD context while the connection is busy ([`Direction::release`] drops the context; the next
//! record builds it again from the key, so an idle session holds about a hundred bytes per
//! direction).

use std::fmt;
use std::io;
use std::sync::atomic::{compiler_fence, Ordering};

use crate::aead::{AeadAlg, AeadOpener, AeadSealer, NONCE_LEN, TAG_LEN};
use crate::hash::HashAlg;
use crate::hmac::Hmac;

/// Record header length: type, legacy version, length.
pub(crate) const HEADER_LEN: usize = 5;
/// Outer type of every protected record.
pub(crate) const APPLICATION_DATA: u8 = 23;
/// Inner type of an alert.
pub(crate) const ALERT: u8 = 21;
/// Inner type of a handshake message.
pub(crate) const HANDSHAKE: u8 = 22;
/// Largest plaintext of one record (2^14).
pub(crate) const MAX_PLAINTEXT: usize = 16 * 1024;
/// Largest protected body of one record (2^14 + 256, §5.2).
pub(crate) const MAX_CIPHERTEXT: usize = MAX_PLAINTEXT + 256;
/// Longest traffic secret (SHA-384).
const MAX_SECRET: usize = 48;
/// Longest AEAD key.
const MAX_KEY: usize = 32;

/// A TLS 1.3 cipher suite this module protects records for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Suite {
    /// TLS_AES_128_GCM_SHA256.
    Aes128Gcm,
    /// TLS_AES_256_GCM_SHA384.
    Aes256Gcm,
    /// TLS_CHACHA20_POLY1305_SHA256.
    ChaCha20Poly1305,
}

impl Suite {
    /// The suite OpenSSL calls `name` (its RFC name), if this module supports it; the CCM
    /// suites stay with OpenSSL.
    pub(crate) fn from_name(name: &str) -> Option<Suite> {
        match name {
            "TLS_AES_128_GCM_SHA256" => Some(Suite::Aes128Gcm),
            "TLS_AES_256_GCM_SHA384" => Some(Suite::Aes256Gcm),
            "TLS_CHACHA20_POLY1305_SHA256" => Some(Suite::ChaCha20Poly1305),
            _ => None,
        }
    }

    fn aead(self) -> AeadAlg {
        match self {
            Suite::Aes128Gcm => AeadAlg::Aes128Gcm,
            Suite::Aes256Gcm => AeadAlg::Aes256Gcm,
            Suite::ChaCha20Poly1305 => AeadAlg::ChaCha20Poly1305,
        }
    }

    fn hash(self) -> HashAlg {
        match self {
            Suite::Aes256Gcm => HashAlg::Sha384,
            Suite::Aes128Gcm | Suite::ChaCha20Poly1305 => HashAlg::Sha256,
        }
    }

    /// Length of this suite's traffic secrets (its hash's output).
    pub(crate) fn secret_len(self) -> usize {
        self.hash().output_len()
    }
}

/// Key bytes, wiped when dropped.
#[derive(Clone)]
pub(crate) struct Secret {
    bytes: [u8; MAX_SECRET],
    len: u8,
}

impl Secret {
    /// A copy of `bytes`, or `None` when longer than any TLS 1.3 secret.
    pub(crate) fn new(bytes: &[u8]) -> Option<Secret> {
        let mut secret = Secret {
            bytes: [0; MAX_SECRET],
            len: u8::try_from(bytes.len()).ok()?,
        };
        secret.bytes.get_mut(..bytes.len())?.copy_from_slice(bytes);
        Some(secret)
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        wipe(&mut self.bytes);
    }
}

/// Zeroes `bytes` in a way the compiler cannot drop as a dead store.
pub(crate) fn wipe(bytes: &mut [u8]) {
    for b in bytes {
        // SAFETY: `b` is a valid, aligned, exclusive reference to one byte.
        unsafe { std::ptr::write_volatile(b, 0) };
    }
    compiler_fence(Ordering::SeqCst);
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({} bytes)", self.len)
    }
}

/// HKDF-Expand-Label(secret, label, "", out.len()) of §7.1, for outputs no longer than the hash
/// (one HMAC block: every TLS 1.3 key, IV and secret).
fn expand_label(hash: HashAlg, secret: &Secret, label: &str, out: &mut [u8]) -> io::Result<()> {
    let full = [b"tls13 ", label.as_bytes()].concat();
    let out_len = u16::try_from(out.len()).map_err(io::Error::other)?;
    let label_len = u8::try_from(full.len()).map_err(io::Error::other)?;
    let mut mac = Hmac::with_alg(hash, secret.as_bytes())?;
    mac.update(&out_len.to_be_bytes())?;
    mac.update(&[label_len])?;
    mac.update(&full)?;
    mac.update(&[0, 1])?;
    let block = mac.finish()?;
    let block = block.get(..out.len()).ok_or_else(|| {
        io::Error::other(format!("{label}: {} bytes asked of one block", out.len()))
    })?;
    out.copy_from_slice(block);
    Ok(())
}

/// One direction's key material.
#[derive(Debug)]
struct Keys {
    suite: Suite,
    secret: Secret,
    key: Secret,
    iv: [u8; NONCE_LEN],
    seq: u64,
}

impl Keys {
    /// The keys of `secret`, with `seq` records already protected under it.
    fn new(suite: Suite, secret: Secret, seq: u64) -> io::Result<Keys> {
        let mut key = [0u8; MAX_KEY];
        let key_len = suite.aead().key_len();
        expand_label(suite.hash(), &secret, "key", &mut key[..key_len])?;
        let mut iv = [0u8; NONCE_LEN];
        expand_label(suite.hash(), &secret, "iv", &mut iv)?;
        let keys = Keys {
            suite,
            secret,
            key: Secret::new(&key[..key_len]).ok_or_else(|| io::Error::other("key length"))?,
            iv,
            seq,
        };
        wipe(&mut key);
        Ok(keys)
    }

    /// The next generation of keys (KeyUpdate, §7.2).
    fn next(&self) -> io::Result<Keys> {
        let mut next = [0u8; MAX_SECRET];
        let len = self.suite.secret_len();
        expand_label(
            self.suite.hash(),
            &self.secret,
            "traffic upd",
            &mut next[..len],
        )?;
        let secret = Secret::new(&next[..len]).ok_or_else(|| io::Error::other("secret length"))?;
        wipe(&mut next);
        Keys::new(self.suite, secret, 0)
    }

    /// The next record's nonce (§5.3), counting the record.
    fn next_nonce(&mut self) -> io::Result<[u8; NONCE_LEN]> {
        let seq = self.seq;
        self.seq = seq.checked_add(1).ok_or_else(|| {
            io::Error::other("TLS record sequence numbers exhausted for this key")
        })?;
        let mut nonce = self.iv;
        for (n, s) in nonce[NONCE_LEN - 8..].iter_mut().zip(seq.to_be_bytes()) {
            *n ^= s;
        }
        Ok(nonce)
    }
}

/// The header of a protected record of `body_len` bytes.
fn header(body_len: usize) -> [u8; HEADER_LEN] {
    let [hi, lo] = u16::try_from(body_len).unwrap_or(u16::MAX).to_be_bytes();
    [APPLICATION_DATA, 3, 3, hi, lo]
}

/// The length of the record body announced by `header`; an error for anything a TLS 1.3 peer
/// may not send after the handshake (another outer type, a body too short for a tag and a type,
/// or longer than §5.2 allows).
pub(crate) fn body_len(header: &[u8; HEADER_LEN]) -> io::Result<usize> {
    if header[0] != APPLICATION_DATA {
        return Err(invalid(format!(
            "unexpected_message: a record of type {} after the TLS 1.3 handshake",
            header[0]
        )));
    }
    let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
    if len <= TAG_LEN || len > MAX_CIPHERTEXT {
        return Err(invalid(format!(
            "record_overflow: a TLS record of {len} bytes (at most {MAX_CIPHERTEXT})"
        )));
    }
    Ok(len)
}

/// An error for bytes a peer sent that TLS forbids.
pub(crate) fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// An AEAD context of one direction, built from a key when the direction is next used.
pub(crate) trait DirectionAead: Sized {
    /// The context for `alg` under `key`.
    fn keyed(alg: AeadAlg, key: &[u8]) -> io::Result<Self>;
}

impl DirectionAead for AeadSealer {
    fn keyed(alg: AeadAlg, key: &[u8]) -> io::Result<Self> {
        Ok(AeadSealer::new(alg, key)?)
    }
}

impl DirectionAead for AeadOpener {
    fn keyed(alg: AeadAlg, key: &[u8]) -> io::Result<Self> {
        Ok(AeadOpener::new(alg, key)?)
    }
}

/// One direction of a session: its keys, and its AEAD context while the connection is busy.
#[derive(Debug)]
pub(crate) struct Direction<A> {
    keys: Keys,
    live: Option<A>,
}

/// The sending direction.
pub(crate) type Sealing = Direction<AeadSealer>;
/// The receiving direction.
pub(crate) type Opening = Direction<AeadOpener>;

impl<A: DirectionAead> Direction<A> {
    /// The direction under `secret`, `seq` records already protected under it.
    pub(crate) fn new(suite: Suite, secret: Secret, seq: u64) -> io::Result<Self> {
        Ok(Direction {
            keys: Keys::new(suite, secret, seq)?,
            live: None,
        })
    }

    /// The next record's nonce and the AEAD context (built again after a release).
    fn next(&mut self) -> io::Result<([u8; NONCE_LEN], &mut A)> {
        let nonce = self.keys.next_nonce()?;
        let aead = match &mut self.live {
            Some(aead) => aead,
            live => live.insert(A::keyed(self.keys.suite.aead(), self.keys.key.as_bytes())?),
        };
        Ok((nonce, aead))
    }

    /// Moves to the next generation of keys (after a KeyUpdate went this way).
    pub(crate) fn update(&mut self) -> io::Result<()> {
        self.keys = self.keys.next()?;
        self.live = None;
        Ok(())
    }

    /// Drops the AEAD context (an idle connection keeps only the key).
    pub(crate) fn release(&mut self) {
        self.live = None;
    }
}

impl Direction<AeadSealer> {
    /// Appends to `out` one record carrying `content` (at most [`MAX_PLAINTEXT`] bytes) of inner
    /// type `kind`, unpadded.
    pub(crate) fn seal(&mut self, kind: u8, content: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        debug_assert!(content.len() <= MAX_PLAINTEXT);
        let body = content.len() + 1 + TAG_LEN;
        let head = header(body);
        let (nonce, aead) = self.next()?;
        let at = out.len();
        out.resize(at + HEADER_LEN + body, 0);
        let record = &mut out[at..];
        record[..HEADER_LEN].copy_from_slice(&head);
        let (sealed, tag) = record[HEADER_LEN..].split_at_mut(content.len() + 1);
        aead.start(&nonce, &head)?;
        let (data, kind_byte) = sealed.split_at_mut(content.len());
        aead.update(content, data)?;
        aead.update(&[kind], kind_byte)?;
        tag.copy_from_slice(&aead.finish()?);
        Ok(())
    }
}

impl Direction<AeadOpener> {
    /// Decrypts the record `head` + `body` into `out` (replacing its contents) and returns its
    /// inner type, `out` left holding the content without padding. A record that fails
    /// authentication is `bad_record_mac`; one that is all padding is `unexpected_message`.
    pub(crate) fn open(
        &mut self,
        head: &[u8; HEADER_LEN],
        body: &[u8],
        out: &mut Vec<u8>,
    ) -> io::Result<u8> {
        let (sealed, tag) = body.split_at(body.len() - TAG_LEN);
        let (nonce, aead) = self.next()?;
        out.clear();
        out.resize(sealed.len(), 0);
        aead.start(&nonce, head)?;
        aead.update(sealed, out)?;
        if aead.finish(tag).is_err() {
            out.fill(0);
            out.clear();
            return Err(invalid(
                "bad_record_mac: a TLS record failed authentication".into(),
            ));
        }
        let Some(end) = out.iter().rposition(|&b| b != 0) else {
            return Err(invalid(
                "unexpected_message: a TLS record with no content type".into(),
            ));
        };
        let kind = out[end];
        out.truncate(end);
        if out.len() > MAX_PLAINTEXT {
            return Err(invalid(format!(
                "record_overflow: {} bytes of plaintext in one TLS record",
                out.len()
            )));
        }
        Ok(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn keys_follow_rfc_8448() {
        // RFC 8448 §3, "Simple 1-RTT Handshake": the server's application traffic secret and
        // the write key and IV derived from it.
        let secret = hex("a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643");
        let keys = Keys::new(Suite::Aes128Gcm, Secret::new(&secret).unwrap(), 0).unwrap();
        assert_eq!(keys.key.as_bytes(), hex("9f02283b6c9c07efc26bb9f2ac92e356"));
        assert_eq!(keys.iv.to_vec(), hex("cf782b88dd83549aadf1e984"));
    }

    #[test]
    fn records_round_trip_through_every_suite_and_key_update() {
        for suite in [Suite::Aes128Gcm, Suite::Aes256Gcm, Suite::ChaCha20Poly1305] {
            let secret = Secret::new(&vec![7u8; suite.secret_len()]).unwrap();
            let mut seal = Sealing::new(suite, secret.clone(), 5).unwrap();
            let mut open = Opening::new(suite, secret, 5).unwrap();
            let mut wire = Vec::new();
            seal.seal(APPLICATION_DATA, b"first", &mut wire).unwrap();
            seal.release();
            seal.seal(HANDSHAKE, b"second", &mut wire).unwrap();
            seal.update().unwrap();
            seal.seal(APPLICATION_DATA, b"", &mut wire).unwrap();

            let mut plain = Vec::new();
            let mut rest = &wire[..];
            let mut got = Vec::new();
            for round in 0..3 {
                let head: [u8; HEADER_LEN] = rest[..HEADER_LEN].try_into().unwrap();
                let len = body_len(&head).unwrap();
                let kind = open
                    .open(&head, &rest[HEADER_LEN..HEADER_LEN + len], &mut plain)
                    .unwrap();
                got.push((kind, plain.clone()));
                rest = &rest[HEADER_LEN + len..];
                if round == 1 {
                    open.update().unwrap();
                }
                open.release();
            }
            assert!(rest.is_empty());
            assert_eq!(
                got,
                [
                    (APPLICATION_DATA, b"first".to_vec()),
                    (HANDSHAKE, b"second".to_vec()),
                    (APPLICATION_DATA, Vec::new()),
                ],
                "{suite:?}"
            );
        }
    }

    #[test]
    fn a_changed_byte_or_a_wrong_sequence_number_fails_authentication() {
        let secret = Secret::new(&[9u8; 32]).unwrap();
        let mut wire = Vec::new();
        let mut seal = Sealing::new(Suite::Aes128Gcm, secret.clone(), 0).unwrap();
        seal.seal(APPLICATION_DATA, b"payload", &mut wire).unwrap();
        let head: [u8; HEADER_LEN] = wire[..HEADER_LEN].try_into().unwrap();
        let mut plain = Vec::new();

        let mut skewed = Opening::new(Suite::Aes128Gcm, secret.clone(), 1).unwrap();
        let err = skewed
            .open(&head, &wire[HEADER_LEN..], &mut plain)
            .unwrap_err();
        assert!(err.to_string().contains("bad_record_mac"), "{err}");

        let mut flipped = wire.clone();
        flipped[HEADER_LEN + 2] ^= 1;
        let mut open = Opening::new(Suite::Aes128Gcm, secret, 0).unwrap();
        let err = open
            .open(&head, &flipped[HEADER_LEN..], &mut plain)
            .unwrap_err();
        assert!(err.to_string().contains("bad_record_mac"), "{err}");
        assert!(plain.is_empty(), "no unauthenticated byte is handed out");
    }

    #[test]
    fn padding_is_stripped_and_all_padding_is_refused() {
        let secret = Secret::new(&[3u8; 32]).unwrap();
        let mut seal = Sealing::new(Suite::Aes128Gcm, secret.clone(), 0).unwrap();
        let mut open = Opening::new(Suite::Aes128Gcm, secret, 0).unwrap();
        // Kind 0 after a content that ends in its real type and zeros: a padded record.
        let mut wire = Vec::new();
        seal.seal(0, b"abc\x17\x00\x00\x00", &mut wire).unwrap();
        seal.seal(0, &[0, 0, 0], &mut wire).unwrap();
        let mut plain = Vec::new();
        let head: [u8; HEADER_LEN] = wire[..HEADER_LEN].try_into().unwrap();
        let len = body_len(&head).unwrap();
        let body = &wire[HEADER_LEN..HEADER_LEN + len];
        assert_eq!(
            open.open(&head, body, &mut plain).unwrap(),
            APPLICATION_DATA
        );
        assert_eq!(plain, b"abc");
        let rest = &wire[HEADER_LEN + len..];
        let head: [u8; HEADER_LEN] = rest[..HEADER_LEN].try_into().unwrap();
        let err = open
            .open(&head, &rest[HEADER_LEN..], &mut plain)
            .unwrap_err();
        assert!(err.to_string().contains("unexpected_message"), "{err}");
    }

    #[test]
    fn headers_outside_tls_1_3_are_refused() {
        assert_eq!(body_len(&[23, 3, 3, 0, 17]).unwrap(), 17);
        for bad in [
            [20u8, 3, 3, 0, 1],
            [21, 3, 3, 0, 2],
            [23, 3, 3, 0, 16],
            [23, 3, 3, 0x41, 0x01],
        ] {
            let err = body_len(&bad).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{bad:?}");
        }
    }
}
