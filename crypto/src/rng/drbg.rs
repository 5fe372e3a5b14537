//! The generator's core: an AES-128-CTR keystream with fast key erasure, deterministic from a
//! 32-byte seed (no thread, no OS: the known-answer tests drive it directly).
//!
//! Every generate step draws `output || next key || next counter block` from one keystream
//! and switches to the new key at once, so the state never holds what would recompute bytes
//! already handed out (backtracking resistance, as in NIST SP 800-90A's CTR_DRBG update and
//! Bernstein's "fast-key-erasure" generators). Small requests are served from a buffer of
//! keystream drawn in one step; bytes are zeroed in the buffer as they are handed out.

use crate::ctr::{Ctr, CtrAlg, CTR_IV_LEN};
use crate::error::Result;
use crate::tls::wipe;

/// Seed size: an AES-128 key and an initial counter block.
pub(crate) const SEED_LEN: usize = KEY_LEN + CTR_IV_LEN;
const KEY_LEN: usize = 16;
/// Keystream drawn at once for requests shorter than this; longer ones are written in place.
pub(crate) const BUFFER_LEN: usize = 4096;
/// Most bytes one key produces inside a long request before it is replaced.
const KEY_LIMIT: usize = 1 << 20;
/// The keystream is the encryption of zeros; this many at a time (input and output stay in L1).
const ZEROS_LEN: usize = 16 * 1024;
static ZEROS: [u8; ZEROS_LEN] = [0; ZEROS_LEN];

/// AES-128-CTR with fast key erasure, a keystream buffer and a count of bytes since the seed.
pub(crate) struct Drbg {
    ctr: Ctr,
    /// On the heap, built there: a fiber's stack is small.
    buf: Box<[u8]>,
    /// Next unread byte of `buf`; `BUFFER_LEN` when it is empty.
    pos: usize,
    generated: u64,
}

impl Drbg {
    /// A generator whose whole output is determined by `seed`.
    pub(crate) fn new(seed: &[u8; SEED_LEN]) -> Result<Drbg> {
        let (key, iv) = seed.split_at(KEY_LEN);
        Ok(Drbg {
            ctr: Ctr::with_alg(CtrAlg::Aes128Ctr, key, iv)?,
            buf: vec![0; BUFFER_LEN].into_boxed_slice(),
            pos: BUFFER_LEN,
            generated: 0,
        })
    }

    /// Replaces the whole state by `seed`: buffered bytes are wiped, the count starts again.
    pub(crate) fn reseed(&mut self, seed: &[u8; SEED_LEN]) -> Result<()> {
        wipe(&mut self.buf[self.pos..]);
        self.pos = BUFFER_LEN;
        self.generated = 0;
        let (key, iv) = seed.split_at(KEY_LEN);
        self.ctr.rekey(key, iv)
    }

    /// Bytes handed out since the last seed.
    pub(crate) fn generated(&self) -> u64 {
        self.generated
    }

    /// Fills `out`: from the buffer if it is short, straight from the cipher if not.
    pub(crate) fn fill(&mut self, out: &mut [u8]) -> Result<()> {
        self.generated += out.len() as u64;
        if out.len() >= BUFFER_LEN {
            for part in out.chunks_mut(KEY_LIMIT) {
                keystream(&mut self.ctr, part)?;
                self.next_key()?;
            }
            return Ok(());
        }
        let mut out = out;
        while !out.is_empty() {
            if self.pos == BUFFER_LEN {
                self.refill()?;
            }
            let n = out.len().min(BUFFER_LEN - self.pos);
            let (now, rest) = out.split_at_mut(n);
            let served = &mut self.buf[self.pos..self.pos + n];
            now.copy_from_slice(served);
            served.fill(0);
            self.pos += n;
            out = rest;
        }
        Ok(())
    }

    /// `N` bytes (a `u32`, a `u64`): one fixed-size copy when the buffer holds them.
    pub(crate) fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        match self.buf.get_mut(self.pos..self.pos + N) {
            Some(served) => {
                out.copy_from_slice(served);
                served.fill(0);
                self.pos += N;
                self.generated += N as u64;
            }
            None => self.fill(&mut out)?,
        }
        Ok(out)
    }

    fn refill(&mut self) -> Result<()> {
        keystream(&mut self.ctr, &mut self.buf[..])?;
        self.pos = 0;
        self.next_key()
    }

    /// Draws the next key and counter block from the keystream and switches to them.
    fn next_key(&mut self) -> Result<()> {
        let mut next = [0u8; SEED_LEN];
        keystream(&mut self.ctr, &mut next)?;
        let (key, iv) = next.split_at(KEY_LEN);
        let switched = self.ctr.rekey(key, iv);
        wipe(&mut next);
        switched
    }
}

impl Drop for Drbg {
    fn drop(&mut self) {
        wipe(&mut self.buf[..]);
    }
}

/// Writes the next `out.len()` bytes of keystream into `out` (the encryption of zeros).
fn keystream(ctr: &mut Ctr, out: &mut [u8]) -> Result<()> {
    for part in out.chunks_mut(ZEROS_LEN) {
        ctr.apply_to(&ZEROS[..part.len()], part)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::{from_hex, hex};

    /// NIST SP 800-38A F.5.1 (CTR-AES128.Encrypt): key and initial counter block.
    const F51_SEED: &str = "2b7e151628aed2a6abf7158809cf4f3c\
                            f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
    const F51_PLAIN: &str = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51\
                             30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
    const F51_CIPHER: &str = "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff\
                              5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee";

    fn f51() -> Drbg {
        let seed: [u8; SEED_LEN] = from_hex(F51_SEED).unwrap().try_into().unwrap();
        Drbg::new(&seed).unwrap()
    }

    /// F.5.1's keystream: its ciphertext XOR its plaintext.
    fn f51_keystream() -> Vec<u8> {
        let (p, c) = (from_hex(F51_PLAIN).unwrap(), from_hex(F51_CIPHER).unwrap());
        p.iter().zip(&c).map(|(p, c)| p ^ c).collect()
    }

    #[test]
    fn first_output_is_the_sp800_38a_keystream_through_the_buffer() {
        let mut d = f51();
        let mut out = [0u8; 64];
        d.fill(&mut out[..5]).unwrap();
        d.fill(&mut out[5..]).unwrap();
        assert_eq!(hex(&out), hex(&f51_keystream()));
        assert_eq!(d.generated(), 64);
    }

    #[test]
    fn first_output_is_the_sp800_38a_keystream_in_place() {
        let mut out = vec![0u8; 2 * BUFFER_LEN];
        f51().fill(&mut out).unwrap();
        assert_eq!(hex(&out[..64]), hex(&f51_keystream()));
    }

    /// The step after the first: the key and counter block are the 32 keystream bytes after
    /// the first step's output. Expected values from the `openssl` command:
    /// `head -c 4128 /dev/zero | openssl enc -aes-128-ctr -K 2b7e...4f3c -iv f0f1...feff`
    /// gives bytes 4096..4128 (key || counter block), and the same on 16 zero bytes under those
    /// gives the next block; likewise at 8192 for an 8192-byte request.
    #[test]
    fn the_next_step_runs_under_the_key_drawn_from_the_stream() {
        let mut d = f51();
        let mut first = vec![0u8; BUFFER_LEN];
        d.fill(&mut first[..1]).unwrap();
        d.fill(&mut first[1..]).unwrap();
        let mut next = [0u8; 16];
        d.fill(&mut next).unwrap();
        assert_eq!(hex(&next), AFTER_BUFFER);

        let mut d = f51();
        let mut long = vec![0u8; 2 * BUFFER_LEN];
        d.fill(&mut long).unwrap();
        d.fill(&mut next).unwrap();
        assert_eq!(hex(&next), AFTER_8192);
    }

    const AFTER_BUFFER: &str = "817d06dbb11d27bc22f080ef440a5d7f";
    const AFTER_8192: &str = "34a0b117ff54fc161122835111331189";

    #[test]
    fn served_bytes_are_wiped_from_the_buffer() {
        let mut d = f51();
        let word: [u8; 8] = d.take().unwrap();
        assert_eq!(word[..], f51_keystream()[..8]);
        assert!(d.buf[..8].iter().all(|&b| b == 0));
        assert_ne!(d.buf[8..16], [0u8; 8]);
    }

    #[test]
    fn take_across_the_buffer_end_continues_the_stream() {
        let mut whole = f51();
        let mut expected = vec![0u8; BUFFER_LEN + 8];
        whole.fill(&mut expected[..BUFFER_LEN - 3]).unwrap();
        whole.fill(&mut expected[BUFFER_LEN - 3..]).unwrap();
        let mut d = f51();
        let mut skip = vec![0u8; BUFFER_LEN - 3];
        d.fill(&mut skip).unwrap();
        let word: [u8; 8] = d.take().unwrap();
        assert_eq!(word[..], expected[BUFFER_LEN - 3..BUFFER_LEN + 5]);
        assert_eq!(d.generated(), BUFFER_LEN as u64 + 5);
    }

    #[test]
    fn reseed_wipes_the_buffer_and_changes_the_stream() {
        let mut d = f51();
        let mut a = [0u8; 16];
        d.fill(&mut a).unwrap();
        d.reseed(&[7u8; SEED_LEN]).unwrap();
        assert!(d.buf.iter().all(|&b| b == 0));
        assert_eq!(d.generated(), 0);
        let mut b = [0u8; 16];
        d.fill(&mut b).unwrap();
        let mut fresh = [0u8; 16];
        Drbg::new(&[7u8; SEED_LEN])
            .unwrap()
            .fill(&mut fresh)
            .unwrap();
        assert_eq!(b, fresh);
        assert_ne!(a, b);
    }
}
