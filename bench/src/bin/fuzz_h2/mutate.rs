//! Mutations aware of frame boundaries: a header field (length, type, flags, stream id)
//! changed, a frame repeated, dropped or taken from another seed, plus byte flips, edge
//! bytes, insertions and truncations anywhere.

use crate::rng::Rng;

/// Inputs never grow past this (room for a CONTINUATION flood and a body past the windows).
pub const MAX_INPUT: usize = 256 * 1024;

const EDGE: &[u8] = &[0, 1, 0x7f, 0x80, 0xff, 0x3f, 0x40, 0x20, 0xbe];

/// Byte offsets where the frames of `data` start (as far as the lengths make sense).
fn frame_starts(data: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    while at + 9 <= data.len() {
        starts.push(at);
        let len = u32::from_be_bytes([0, data[at], data[at + 1], data[at + 2]]) as usize;
        at += 9 + len;
    }
    starts
}

/// The frame at `start`, cut to what `data` holds.
fn frame_at(data: &[u8], start: usize) -> std::ops::Range<usize> {
    let len = u32::from_be_bytes([0, data[start], data[start + 1], data[start + 2]]) as usize;
    start..(start + 9 + len).min(data.len())
}

/// Applies one to four mutations (now and then up to sixteen) to `data`.
pub fn mutate(rng: &mut Rng, data: &mut Vec<u8>, others: &[Vec<u8>]) {
    let rounds = 1 + if rng.one_in(16) {
        rng.below(16)
    } else {
        rng.below(4)
    };
    for _ in 0..rounds {
        mutate_once(rng, data, others);
        data.truncate(MAX_INPUT);
    }
}

fn mutate_once(rng: &mut Rng, data: &mut Vec<u8>, others: &[Vec<u8>]) {
    let starts = frame_starts(data);
    let len = data.len();
    match rng.below(10) {
        0 | 1 if !starts.is_empty() => {
            // One header field: 0..3 length, 3 type, 4 flags, 5..9 stream id.
            let at = *rng.pick(&starts) + rng.below(9);
            data[at] = match rng.below(3) {
                0 => *rng.pick(EDGE),
                1 => data[at] ^ (1 << rng.below(8)),
                _ => rng.below(256) as u8,
            };
        }
        2 if !starts.is_empty() => {
            let f = frame_at(data, *rng.pick(&starts));
            let times = if rng.one_in(4) {
                1 + rng.below(2000)
            } else {
                1 + rng.below(3)
            };
            // One splice of all the copies, no more of them than the input bound holds:
            // building or splicing more would cost the fuzzer more than the server.
            let times = times.min(MAX_INPUT / f.len() + 1);
            let copies = data[f.clone()].repeat(times);
            data.splice(f.end..f.end, copies);
        }
        3 if !starts.is_empty() => {
            let f = frame_at(data, *rng.pick(&starts));
            data.drain(f);
        }
        4 => {
            let other = rng.pick(others);
            let theirs = frame_starts(other);
            if !theirs.is_empty() {
                let f = frame_at(other, *rng.pick(&theirs));
                let at = starts
                    .get(rng.below(starts.len() + 1))
                    .copied()
                    .unwrap_or(len);
                data.splice(at..at, other[f].iter().copied());
            }
        }
        5 if len > 0 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        6 if len > 0 => {
            let i = rng.below(len);
            data[i] = *rng.pick(EDGE);
        }
        7 => {
            let at = rng.upto(len);
            let n = 1 + rng.below(16);
            let bytes: Vec<u8> = (0..n).map(|_| rng.below(256) as u8).collect();
            data.splice(at..at, bytes);
        }
        8 if len > 0 => data.truncate(rng.below(len)),
        _ => {
            // A payload byte inside a frame: HPACK, settings values, window increments.
            if let Some(&s) = starts.get(rng.below(starts.len().max(1))) {
                let f = frame_at(data, s);
                if f.len() > 9 {
                    let i = f.start + 9 + rng.below(f.len() - 9);
                    data[i] = *rng.pick(EDGE);
                }
            }
        }
    }
}
