//! compress → decompress round trips on both sides, bombs, and corrupt input: gzip and zlib
//! carry a checksum (and gzip a length), so corrupt data or a corrupt trailer is an error, never
//! other bytes; raw deflate has no checksum, and the tests say what that allows.

use std::io::{self, Read, Write};

use moria_streams::{
    CompressReader, CompressWriter, Compression, DecompressReader, DecompressWriter, Error, Format,
};
use proptest::prelude::*;

const FORMATS: [Format; 3] = [Format::Gzip, Format::Zlib, Format::Deflate];

fn compress(format: Format, data: &[u8], level: u32) -> Vec<u8> {
    let mut w = CompressWriter::new(format, Vec::new(), Compression::new(level));
    w.write_all(data).unwrap();
    w.finish().unwrap()
}

fn decompress_read(format: Format, wire: &[u8], limit: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    DecompressReader::new(format, wire, limit).read_to_end(&mut out)?;
    Ok(out)
}

fn decompress_write(format: Format, wire: &[u8], limit: u64, step: usize) -> io::Result<Vec<u8>> {
    let mut w = DecompressWriter::new(format, Vec::new(), limit);
    for piece in wire.chunks(step.max(1)) {
        w.write_all(piece)?;
    }
    w.finish()
}

fn format_strategy() -> impl Strategy<Value = Format> {
    prop::sample::select(FORMATS.to_vec())
}

proptest! {
    // Compression in a debug build is slow; 64 cases per property keep the suite short.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn write_side_then_read_side(
        format in format_strategy(),
        data in proptest::collection::vec(any::<u8>(), 0..50_000),
        level in 0u32..10,
    ) {
        let wire = compress(format, &data, level);
        prop_assert_eq!(decompress_read(format, &wire, data.len() as u64).unwrap(), data);
    }

    #[test]
    fn read_side_then_write_side(
        format in format_strategy(),
        data in proptest::collection::vec(0u8..4, 0..50_000),
        level in 0u32..10,
        step in 1usize..4_000,
    ) {
        let mut wire = Vec::new();
        CompressReader::new(format, &data[..], Compression::new(level))
            .read_to_end(&mut wire)
            .unwrap();
        prop_assert_eq!(decompress_write(format, &wire, u64::MAX, step).unwrap(), data);
    }

    /// A flipped byte anywhere: an `InvalidData` error, or, where it only touched bits the
    /// format ignores (gzip's MTIME/XFL/OS, deflate's padding), the original bytes. gzip and zlib
    /// never hand back different bytes as `Ok`; raw deflate, with no checksum, may.
    #[test]
    fn corrupted_input_is_an_error_or_the_original(
        format in format_strategy(),
        data in proptest::collection::vec(any::<u8>(), 1..5_000),
        position in any::<prop::sample::Index>(),
        flip in 1u8..=255,
    ) {
        let mut wire = compress(format, &data, 6);
        let i = position.index(wire.len());
        wire[i] ^= flip;
        for result in [
            decompress_read(format, &wire, 1 << 20),
            decompress_write(format, &wire, 1 << 20, 100),
        ] {
            match result {
                Err(e) => prop_assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{}", e),
                Ok(out) if format != Format::Deflate => {
                    prop_assert!(out == data, "byte {} flipped: {:?} decoded to other bytes", i, format);
                }
                Ok(_) => {}
            }
        }
    }
}

#[test]
fn a_bomb_stops_at_the_limit_on_both_sides() {
    let zeros = vec![0u8; 10 << 20];
    for format in FORMATS {
        let wire = compress(format, &zeros, 9);
        assert!(wire.len() < 64 << 10);
        let limit = 1 << 20;
        for err in [
            decompress_read(format, &wire, limit).unwrap_err(),
            decompress_write(format, &wire, limit, 4096).unwrap_err(),
        ] {
            assert_eq!(err.kind(), io::ErrorKind::InvalidData);
            assert!(
                matches!(
                    Error::from_io(&err),
                    Some(Error::DecompressedTooLarge { limit: 1048576, .. })
                ),
                "{err}"
            );
        }
    }
}

#[test]
fn output_exactly_at_the_limit_is_accepted() {
    for format in FORMATS {
        let wire = compress(format, b"exactly", 6);
        assert_eq!(decompress_read(format, &wire, 7).unwrap(), b"exactly");
        assert_eq!(decompress_write(format, &wire, 7, 3).unwrap(), b"exactly");
        assert!(decompress_read(format, &wire, 6).is_err());
    }
}

#[test]
fn truncated_input_is_invalid_data_saying_truncated() {
    let data: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
    for format in FORMATS {
        let wire = compress(format, &data, 6);
        let cut = &wire[..wire.len() / 2];
        for err in [
            decompress_read(format, cut, u64::MAX).unwrap_err(),
            decompress_write(format, cut, u64::MAX, 512).unwrap_err(),
        ] {
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{format:?}: {err}");
            assert!(err.to_string().contains("truncated"), "{err}");
            assert!(err.to_string().starts_with(format.name()), "{err}");
        }
    }
}

/// Both decoders of `format` on `wire`: each must fail with `InvalidData`.
fn assert_both_sides_reject(format: Format, wire: &[u8], what: &str) {
    for (side, result) in [
        ("read side", decompress_read(format, wire, u64::MAX)),
        ("write side", decompress_write(format, wire, u64::MAX, 333)),
    ] {
        match result {
            Err(e) => assert_eq!(
                e.kind(),
                io::ErrorKind::InvalidData,
                "{format:?} {what}: {e}"
            ),
            Ok(_) => panic!("{format:?} {side}: {what} decoded to Ok"),
        }
    }
}

#[test]
fn a_corrupt_checksum_or_length_trailer_is_an_error() {
    let data = b"the trailer is what catches silent corruption\n".repeat(50);
    // gzip ends with CRC-32 then ISIZE (4 bytes each), zlib with Adler-32 (4 bytes).
    for (format, trailer) in [(Format::Gzip, 8), (Format::Zlib, 4)] {
        let wire = compress(format, &data, 6);
        for back in 1..=trailer {
            let mut bad = wire.clone();
            let i = bad.len() - back;
            bad[i] ^= 0x01;
            assert_both_sides_reject(format, &bad, &format!("trailer byte -{back} flipped"));
        }
    }
}

#[test]
fn corrupt_data_is_an_error_with_a_checksum_and_other_bytes_without() {
    // Level 0 stores the data as is, so a flipped byte in the middle is a flipped data byte the
    // deflate layer cannot notice: only the container's checksum can.
    let data: Vec<u8> = (0..4_000u32).map(|i| (i * 13 % 256) as u8).collect();
    for format in FORMATS {
        let mut wire = compress(format, &data, 0);
        let i = wire.len() / 2;
        wire[i] ^= 0x20;
        if format == Format::Deflate {
            let out = decompress_read(format, &wire, u64::MAX).unwrap();
            assert_eq!(out.len(), data.len());
            assert_eq!(
                out.iter().zip(&data).filter(|(a, b)| a != b).count(),
                1,
                "raw deflate hands back the flipped byte"
            );
        } else {
            assert_both_sides_reject(format, &wire, "a stored data byte flipped");
        }
    }
}

#[test]
fn garbage_is_invalid_data_naming_the_format() {
    for format in [Format::Gzip, Format::Zlib] {
        let err = decompress_read(format, b"this is not compressed at all", u64::MAX).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
        assert!(err.to_string().starts_with(format.name()), "{err}");
    }
}

#[test]
fn concatenated_gzip_members_decode_like_gzip_d() {
    let mut wire = compress(Format::Gzip, b"hello ", 6);
    wire.extend(compress(Format::Gzip, b"world", 6));
    assert_eq!(
        decompress_read(Format::Gzip, &wire, 100).unwrap(),
        b"hello world"
    );
    assert_eq!(
        decompress_write(Format::Gzip, &wire, 100, 5).unwrap(),
        b"hello world"
    );
}

#[test]
fn inner_errors_pass_through_unchanged() {
    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::ErrorKind::ConnectionReset.into())
        }
    }
    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    for format in FORMATS {
        let err = DecompressReader::new(format, io::BufReader::new(Broken), 10)
            .read(&mut [0; 8])
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
        let wire = compress(format, &[7u8; 100_000], 1);
        let mut w = DecompressWriter::new(format, Broken, u64::MAX);
        let err = w
            .write_all(&wire)
            .and_then(|()| w.finish().map(drop))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe, "{format:?}");
    }
}

#[test]
fn gzip_output_is_readable_by_the_gzip_command() {
    let mut child = std::process::Command::new("gzip")
        .arg("-dc")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run `gzip` ({e}): install the Debian package gzip"));
    let data = b"interop with the reference implementation\n".repeat(100);
    let wire = compress(Format::Gzip, &data, 6);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&wire).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, data);
}
