//! gzip, zlib and raw deflate on either side of a stream (flate2).
//!
//! | type | reads or writes | does |
//! |---|---|---|
//! | [`CompressReader`] | reads plain data from a `BufRead` | yields compressed bytes |
//! | [`DecompressReader`] | reads compressed data from a `BufRead` | yields plain bytes, bounded |
//! | [`CompressWriter`] | takes plain writes | writes compressed bytes to a `Write` |
//! | [`DecompressWriter`] | takes compressed writes | writes plain bytes to a `Write`, bounded |
//!
//! Decoders take a limit on the decompressed size: past it they fail with `InvalidData`
//! ([`crate::Error::DecompressedTooLarge`]) instead of inflating a bomb. Corrupt or truncated
//! compressed input is `InvalidData` ([`crate::Error::CorruptCompressed`]); errors of the inner
//! stream pass through unchanged.

/// The three flate2 codecs of one side behind one type.
#[derive(Debug)]
enum Codec<G, Z, D> {
    Gzip(G),
    Zlib(Z),
    Deflate(D),
}

/// Runs the same expression on whichever codec a [`Codec`] holds.
macro_rules! each {
    ($codec:expr, $c:ident => $body:expr) => {
        match $codec {
            Codec::Gzip($c) => $body,
            Codec::Zlib($c) => $body,
            Codec::Deflate($c) => $body,
        }
    };
}

mod read;
mod tagged;
mod write;

pub use flate2::Compression;
pub use read::{CompressReader, DecompressReader};
pub use write::{CompressWriter, DecompressWriter};

/// The container around the deflate data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// gzip (RFC 1952); decoders accept several concatenated members, as `gzip -d` does.
    Gzip,
    /// zlib (RFC 1950), HTTP's `deflate` content coding.
    Zlib,
    /// Raw deflate (RFC 1951), no header or checksum.
    Deflate,
}

impl Format {
    /// The format's name, as used in error messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Gzip => "gzip",
            Format::Zlib => "zlib",
            Format::Deflate => "deflate",
        }
    }
}
