//! `File` (read-ahead state machine on the offload pool) checked against `std::fs::File` on
//! random sequences of reads, writes and seeks.

use std::io::{Read, Seek, SeekFrom, Write};

use moria_streams::File;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Read(usize),
    Write(Vec<u8>),
    Seek(SeekFrom),
    WriteAt(Vec<u8>, u64),
    ReadAt(usize, u64),
    SetLen(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..20_000).prop_map(Op::Read),
        2 => proptest::collection::vec(any::<u8>(), 0..6_000).prop_map(Op::Write),
        1 => (0u64..40_000).prop_map(|n| Op::Seek(SeekFrom::Start(n))),
        1 => (-20_000i64..20_000).prop_map(|n| Op::Seek(SeekFrom::Current(n))),
        1 => (-20_000i64..100).prop_map(|n| Op::Seek(SeekFrom::End(n))),
        1 => (proptest::collection::vec(any::<u8>(), 0..3_000), 0u64..40_000)
            .prop_map(|(d, at)| Op::WriteAt(d, at)),
        1 => (0usize..5_000, 0u64..40_000).prop_map(|(n, at)| Op::ReadAt(n, at)),
        1 => (0u64..40_000).prop_map(Op::SetLen),
    ]
}

proptest! {
    #[test]
    fn file_behaves_like_std_file(
        initial in proptest::collection::vec(any::<u8>(), 0..30_000),
        ops in proptest::collection::vec(op(), 1..40),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (ours_path, model_path) = (dir.path().join("ours"), dir.path().join("model"));
        std::fs::write(&ours_path, &initial).unwrap();
        std::fs::write(&model_path, &initial).unwrap();
        let mut ours = File::options().read(true).write(true).open(&ours_path).unwrap();
        ours.set_read_chunk(4096);
        let mut model = std::fs::OpenOptions::new().read(true).write(true).open(&model_path).unwrap();
        for op in ops {
            match op {
                Op::Read(n) => {
                    let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
                    let got_a = ours.read(&mut a).unwrap();
                    // std may return fewer bytes than asked; read the same amount from the model.
                    let mut got_b = 0;
                    while got_b < got_a {
                        let k = model.read(&mut b[got_b..got_a]).unwrap();
                        prop_assert!(k > 0, "model ended before ours");
                        got_b += k;
                    }
                    prop_assert_eq!(&a[..got_a], &b[..got_b]);
                    if got_a == 0 && n > 0 {
                        prop_assert_eq!(model.read(&mut b).unwrap(), 0);
                    }
                }
                Op::Write(data) => {
                    ours.write_all(&data).unwrap();
                    model.write_all(&data).unwrap();
                }
                Op::Seek(pos) => {
                    let a = ours.seek(pos).map_err(|e| e.kind());
                    let b = model.seek(pos).map_err(|e| e.kind());
                    prop_assert_eq!(a, b);
                }
                Op::WriteAt(data, at) => {
                    ours.write_all_at(&data, at).unwrap();
                    std::os::unix::fs::FileExt::write_all_at(&model, &data, at).unwrap();
                }
                Op::ReadAt(n, at) => {
                    let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
                    let got_a = ours.read_at(&mut a, at).unwrap();
                    let got_b = std::os::unix::fs::FileExt::read_at(&model, &mut b, at).unwrap();
                    prop_assert_eq!(&a[..got_a], &b[..got_b]);
                }
                Op::SetLen(n) => {
                    ours.set_len(n).unwrap();
                    model.set_len(n).unwrap();
                }
            }
        }
        // Checked only at the end: asking the position gives the read-ahead back, and the ops
        // above should run against a live read-ahead.
        prop_assert_eq!(ours.stream_position().unwrap(), model.stream_position().unwrap());
        drop(ours);
        prop_assert_eq!(std::fs::read(&ours_path).unwrap(), std::fs::read(&model_path).unwrap());
    }
}
