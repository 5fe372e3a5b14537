//! Pipe transfers of random data in random read/write sizes between fibers on two workers, and
//! between a fiber and a plain thread.

use std::io::{Read, Write};

use moria_runtime::spawn;
use moria_streams::{pipe_with_capacity, PipeReader, PipeWriter};
use proptest::prelude::*;

use crate::common::runtime;

fn write_in_pieces(mut w: PipeWriter, data: Vec<u8>, sizes: Vec<usize>) -> std::io::Result<()> {
    let mut rest = &data[..];
    for size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let n = w.write(&rest[..(*size).min(rest.len())])?;
        rest = &rest[n..];
    }
    Ok(())
}

fn read_in_pieces(mut r: PipeReader, sizes: Vec<usize>) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    for size in sizes.iter().cycle() {
        let mut buf = vec![0u8; *size];
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    Ok(out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_data_crosses_between_two_fibers(
        data in proptest::collection::vec(any::<u8>(), 0..150_000),
        write_sizes in proptest::collection::vec(1usize..9_000, 1..6),
        read_sizes in proptest::collection::vec(1usize..9_000, 1..6),
        capacity in 1usize..70_000,
    ) {
        runtime();
        let (w, r) = pipe_with_capacity(capacity);
        let expected = data.clone();
        let writer = spawn(move || write_in_pieces(w, data, write_sizes));
        let reader = spawn(move || read_in_pieces(r, read_sizes));
        writer.join().unwrap().unwrap();
        let out = reader.join().unwrap().unwrap();
        prop_assert_eq!(out, expected);
    }
}

#[test]
fn a_fiber_and_a_plain_thread_share_a_pipe() {
    runtime();
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    let (w, r) = pipe_with_capacity(4096);
    let expected = data.clone();
    let writer = spawn(move || write_in_pieces(w, data, vec![1000, 7, 5000]));
    let reader = std::thread::spawn(move || read_in_pieces(r, vec![333, 4096]));
    writer.join().unwrap().unwrap();
    assert_eq!(reader.join().unwrap().unwrap(), expected);
}

#[test]
fn reader_gone_mid_transfer_fails_the_writer_with_broken_pipe() {
    runtime();
    let (w, mut r) = pipe_with_capacity(16);
    let writer = spawn(move || write_in_pieces(w, vec![0u8; 1 << 20], vec![4096]));
    let mut buf = [0u8; 8];
    let reader = spawn(move || {
        r.read_exact(&mut buf).unwrap();
        drop(r);
    });
    reader.join().unwrap();
    let err = writer.join().unwrap().unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
}
