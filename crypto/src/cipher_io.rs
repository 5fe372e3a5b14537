//! Streaming encryption as `Write` adapters: [`CtrWriter`] (both directions), [`SealWriter`]
//! (AEAD encrypt, tag appended at `finish`) and [`OpenWriter`] (AEAD decrypt, tag checked at
//! `finish`). An I/O error leaves an adapter unusable: the keystream has moved on.

use std::io::{self, Write};

use crate::aead::{Aead, TAG_LEN};
use crate::ctr::Ctr;
use crate::error::{Error, Result};

/// Bytes transformed per inner write; the adapters' one scratch buffer has this size.
pub const CHUNK_LEN: usize = 16 * 1024;

/// The inner writer with the scratch buffer every adapter transforms into.
#[derive(Debug)]
struct Sink<W> {
    inner: W,
    buf: Vec<u8>,
    poisoned: bool,
}

impl<W: Write> Sink<W> {
    fn new(inner: W) -> Self {
        Sink {
            inner,
            buf: vec![0u8; CHUNK_LEN],
            poisoned: false,
        }
    }

    /// Fails once an earlier inner write failed (the cipher state has moved past it).
    fn usable(&self) -> io::Result<()> {
        if self.poisoned {
            Err(io::Error::other(
                "cipher stream unusable after an earlier I/O error",
            ))
        } else {
            Ok(())
        }
    }

    /// Transforms up to [`CHUNK_LEN`] bytes of `data` and writes them all; returns how many.
    fn put(
        &mut self,
        data: &[u8],
        transform: impl FnOnce(&[u8], &mut [u8]) -> Result<()>,
    ) -> io::Result<usize> {
        self.usable()?;
        let n = data.len().min(CHUNK_LEN);
        transform(&data[..n], &mut self.buf[..n])?;
        self.poisoned = true;
        self.inner.write_all(&self.buf[..n])?;
        self.poisoned = false;
        Ok(n)
    }
}

/// Encrypts (or decrypts: CTR is symmetric) everything written, into `W`.
#[derive(Debug)]
pub struct CtrWriter<W: Write> {
    sink: Sink<W>,
    ctr: Ctr,
}

impl<W: Write> CtrWriter<W> {
    /// Wraps `inner`, transforming with `ctr` from its current keystream position.
    pub fn new(ctr: Ctr, inner: W) -> Self {
        CtrWriter {
            sink: Sink::new(inner),
            ctr,
        }
    }

    /// Unwraps the inner writer.
    pub fn into_inner(self) -> W {
        self.sink.inner
    }
}

impl<W: Write> Write for CtrWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let ctr = &mut self.ctr;
        self.sink.put(data, |input, out| ctr.apply_to(input, out))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sink.inner.flush()
    }
}

/// AEAD-encrypts everything written into `W`; [`SealWriter::finish`] appends the tag, so `W`
/// receives `ciphertext || tag`, the same bytes as [`Aead::seal`].
#[derive(Debug)]
pub struct SealWriter<W: Write> {
    sink: Sink<W>,
    aead: Aead,
}

impl<W: Write> SealWriter<W> {
    /// Starts a message under `nonce` with associated data `aad`.
    pub fn new(mut aead: Aead, nonce: &[u8], aad: &[u8], inner: W) -> Result<Self> {
        aead.sealer().start(nonce, aad)?;
        Ok(SealWriter {
            sink: Sink::new(inner),
            aead,
        })
    }

    /// Writes the tag, flushes, and returns the inner writer.
    pub fn finish(mut self) -> Result<W> {
        self.sink.usable()?;
        let tag = self.aead.sealer().finish()?;
        self.sink.inner.write_all(&tag)?;
        self.sink.inner.flush()?;
        Ok(self.sink.inner)
    }
}

impl<W: Write> Write for SealWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let aead = &mut self.aead;
        self.sink
            .put(data, |input, out| aead.sealer().update(input, out))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sink.inner.flush()
    }
}

/// AEAD-decrypts `ciphertext || tag` written to it into `W`, holding back the last
/// [`TAG_LEN`] bytes as the tag. **The plaintext reaches `W` before it is authenticated**:
/// trust it only once [`OpenWriter::finish`] returns `Ok` (write to a temporary place first).
#[derive(Debug)]
pub struct OpenWriter<W: Write> {
    sink: Sink<W>,
    aead: Aead,
    held: [u8; TAG_LEN],
    held_len: usize,
}

impl<W: Write> OpenWriter<W> {
    /// Starts a message under `nonce` with associated data `aad`.
    pub fn new(mut aead: Aead, nonce: &[u8], aad: &[u8], inner: W) -> Result<Self> {
        aead.opener().start(nonce, aad)?;
        Ok(OpenWriter {
            sink: Sink::new(inner),
            aead,
            held: [0u8; TAG_LEN],
            held_len: 0,
        })
    }

    /// Checks the tag: `Ok(inner)` if the whole message is authentic, [`Error::TagMismatch`]
    /// if not, [`Error::InvalidLength`] if fewer than [`TAG_LEN`] bytes were written.
    pub fn finish(mut self) -> Result<W> {
        self.sink.usable()?;
        if self.held_len < TAG_LEN {
            return Err(Error::InvalidLength {
                what: "sealed stream",
                expected: format!("at least {TAG_LEN}"),
                got: self.held_len,
            });
        }
        self.aead.opener().finish(&self.held)?;
        self.sink.inner.flush()?;
        Ok(self.sink.inner)
    }

    /// Decrypts and writes all of `ciphertext`.
    fn emit(&mut self, mut ciphertext: &[u8]) -> io::Result<()> {
        while !ciphertext.is_empty() {
            let aead = &mut self.aead;
            let n = self
                .sink
                .put(ciphertext, |input, out| aead.opener().update(input, out))?;
            ciphertext = &ciphertext[n..];
        }
        Ok(())
    }
}

impl<W: Write> Write for OpenWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.sink.usable()?;
        let total = self.held_len + data.len();
        let release = total.saturating_sub(TAG_LEN);
        let from_held = release.min(self.held_len);
        let from_data = release - from_held;
        if from_held > 0 {
            let held = self.held;
            self.emit(&held[..from_held])?;
            self.held.copy_within(from_held..self.held_len, 0);
            self.held_len -= from_held;
        }
        self.emit(&data[..from_data])?;
        let rest = &data[from_data..];
        self.held[self.held_len..self.held_len + rest.len()].copy_from_slice(rest);
        self.held_len += rest.len();
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sink.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 16] = [5; 16];
    const NONCE: [u8; 12] = [6; 12];

    fn aead() -> Aead {
        Aead::new("aes-128-gcm", &KEY).unwrap()
    }

    fn message() -> Vec<u8> {
        (0..100_000u32).map(|i| (i % 251) as u8).collect()
    }

    #[test]
    fn seal_writer_matches_one_shot_seal() {
        let mut writer = SealWriter::new(aead(), &NONCE, b"hdr", Vec::new()).unwrap();
        for piece in message().chunks(777) {
            writer.write_all(piece).unwrap();
        }
        let streamed = writer.finish().unwrap();
        assert_eq!(streamed, aead().seal(&NONCE, b"hdr", &message()).unwrap());
    }

    #[test]
    fn open_writer_round_trips_at_every_split() {
        let sealed = aead().seal(&NONCE, b"hdr", &message()).unwrap();
        for split in [1, 5, 16, 17, 1000, 40_000] {
            let mut writer = OpenWriter::new(aead(), &NONCE, b"hdr", Vec::new()).unwrap();
            for piece in sealed.chunks(split) {
                writer.write_all(piece).unwrap();
            }
            assert_eq!(writer.finish().unwrap(), message(), "split {split}");
        }
    }

    #[test]
    fn open_writer_rejects_tampering_and_truncation() {
        let mut sealed = aead().seal(&NONCE, b"hdr", b"attack at dawn").unwrap();
        sealed[3] ^= 0x80;
        let mut writer = OpenWriter::new(aead(), &NONCE, b"hdr", Vec::new()).unwrap();
        writer.write_all(&sealed).unwrap();
        assert!(matches!(writer.finish(), Err(Error::TagMismatch)));

        let mut short = OpenWriter::new(aead(), &NONCE, b"", Vec::new()).unwrap();
        short.write_all(&[0u8; 10]).unwrap();
        assert!(matches!(
            short.finish(),
            Err(Error::InvalidLength { got: 10, .. })
        ));
    }

    #[test]
    fn ctr_writer_twice_is_identity() {
        let key = [1u8; 32];
        let iv = [2u8; 16];
        let ctr = || Ctr::new("aes-256-ctr", &key, &iv).unwrap();
        let mut enc = CtrWriter::new(ctr(), Vec::new());
        enc.write_all(&message()).unwrap();
        let ciphertext = enc.into_inner();
        assert_ne!(ciphertext, message());
        let mut dec = CtrWriter::new(ctr(), Vec::new());
        for piece in ciphertext.chunks(4099) {
            dec.write_all(piece).unwrap();
        }
        assert_eq!(dec.into_inner(), message());
    }

    #[test]
    fn failed_inner_write_poisons() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut writer = SealWriter::new(aead(), &NONCE, b"", Broken).unwrap();
        assert_eq!(
            writer.write(b"abc").unwrap_err().kind(),
            io::ErrorKind::BrokenPipe
        );
        assert!(writer.write(b"abc").is_err());
        assert!(writer.finish().is_err());
    }
}
