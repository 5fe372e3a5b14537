//! Chunk-encode → decode round trips at random chunk sizes, and random bytes fed to the decoder.

use std::io::{BufReader, Read, Write};

use moria_streams::{ChunkedReader, ChunkedWriter};
use proptest::prelude::*;

fn encode(data: &[u8], chunk_sizes: &[usize], trailers: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = ChunkedWriter::new(Vec::new());
    let mut rest = data;
    let mut sizes = chunk_sizes.iter().cycle();
    while !rest.is_empty() {
        let n = (*sizes.next().unwrap_or(&1)).clamp(1, rest.len());
        w.write_all(&rest[..n]).unwrap();
        rest = &rest[n..];
    }
    w.finish_with_trailers(trailers).unwrap()
}

proptest! {
    #[test]
    fn encode_then_decode_gives_the_data_back(
        data in proptest::collection::vec(any::<u8>(), 0..20_000),
        chunk_sizes in proptest::collection::vec(1usize..5_000, 1..8),
        inner_capacity in 1usize..9_000,
        read_size in 1usize..10_000,
        suffix in proptest::collection::vec(any::<u8>(), 0..16),
    ) {
        let mut wire = encode(&data, &chunk_sizes, &[("X-Check", b"ok")]);
        let body_len = wire.len();
        wire.extend_from_slice(&suffix);
        let mut input = &wire[..];
        let mut reader = ChunkedReader::new(BufReader::with_capacity(inner_capacity, &mut input));
        let mut out = Vec::new();
        let mut buf = vec![0u8; read_size];
        loop {
            let n = reader.read(&mut buf).unwrap();
            if n == 0 { break; }
            out.extend_from_slice(&buf[..n]);
        }
        prop_assert_eq!(&out, &data);
        prop_assert!(reader.is_done());
        prop_assert_eq!(reader.trailers(), &[("X-Check".to_string(), b"ok".to_vec())]);
        // Nothing past the body was consumed from the BufReader's point of view.
        let inner = reader.into_inner();
        prop_assert_eq!(inner.buffer().len() + input.len(), wire.len() - body_len);
    }

    #[test]
    fn random_bytes_never_panic_and_always_terminate(
        wire in proptest::collection::vec(any::<u8>(), 0..512),
    ) {
        let mut out = Vec::new();
        let _ = ChunkedReader::new(&wire[..]).read_to_end(&mut out);
        prop_assert!(out.len() <= wire.len());
    }

    #[test]
    fn mutated_encodings_decode_or_fail_cleanly(
        data in proptest::collection::vec(any::<u8>(), 1..2_000),
        chunk in 1usize..300,
        position in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut wire = encode(&data, &[chunk], &[]);
        let i = position.index(wire.len());
        wire[i] = byte;
        let mut out = Vec::new();
        match ChunkedReader::new(&wire[..]).read_to_end(&mut out) {
            Ok(_) => prop_assert!(out.len() <= wire.len()),
            Err(e) => prop_assert!(matches!(
                e.kind(),
                std::io::ErrorKind::InvalidData | std::io::ErrorKind::UnexpectedEof
            ), "{}", e),
        }
    }
}
