//! Mutations: byte flips, edge bytes, insertions, deletions, truncations, splices from other
//! seeds, repeated lines (duplicate headers, too many headers), huge numbers, inserted header
//! lines, line-ending swaps, repeated ranges (long tokens) and case flips.

use crate::corpus::{EDGE_BYTES, HEADER_LINES, NUMBERS, TOKENS};
use crate::rng::Rng;

/// Inputs never grow past this (above the default 64 KiB head limit, so it is reachable).
pub const MAX_INPUT: usize = 160 * 1024;

/// Applies one to four mutations (now and then a burst of up to sixteen) to `data`, splicing
/// from `others` when it needs material.
pub fn mutate(rng: &mut Rng, data: &mut Vec<u8>, others: &[&[u8]]) {
    let rounds = if rng.one_in(16) {
        1 + rng.below(16)
    } else {
        1 + rng.below(4)
    };
    for _ in 0..rounds {
        mutate_once(rng, data, others);
        data.truncate(MAX_INPUT);
    }
}

fn mutate_once(rng: &mut Rng, data: &mut Vec<u8>, others: &[&[u8]]) {
    let len = data.len();
    match rng.below(12) {
        0 if len > 0 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            data[i] = *rng.pick(EDGE_BYTES);
        }
        2 => {
            let at = rng.upto(len);
            let n = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..n)
                .map(|_| match rng.one_in(2) {
                    true => *rng.pick(EDGE_BYTES),
                    false => rng.next() as u8,
                })
                .collect();
            data.splice(at..at, bytes);
        }
        3 if len > 0 => {
            let at = rng.below(len);
            let end = (at + 1 + rng.below(16)).min(len);
            data.drain(at..end);
        }
        4 => data.truncate(rng.upto(len)),
        5 => {
            let other = *rng.pick(others);
            splice(rng, data, other);
        }
        6 => repeat_line(rng, data),
        7 => huge_number(rng, data),
        8 => insert_header(rng, data),
        9 => swap_line_ending(rng, data),
        10 if len > 0 => {
            let at = rng.below(len);
            let end = (at + 1 + rng.below(32)).min(len);
            let times = if rng.one_in(8) {
                4096
            } else {
                1 + rng.below(64)
            };
            repeat(data, at, end, times);
        }
        11 => overwrite_token(rng, data),
        _ => {
            let i = rng.upto(len);
            data.insert(i, *rng.pick(EDGE_BYTES));
        }
    }
}

/// Replaces a range of `data` with a range of `other` (a crossover when both reach the end).
fn splice(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8]) {
    let at = rng.upto(data.len());
    let end = if rng.one_in(2) {
        data.len()
    } else {
        (at + rng.below(32)).min(data.len())
    };
    let from = rng.upto(other.len());
    let to = (from + rng.upto(other.len() - from)).min(other.len());
    data.splice(at..end, other[from..to].iter().copied());
}

/// The start and end (after its LF) of a random line, if `data` has one.
fn random_line(rng: &mut Rng, data: &[u8]) -> Option<(usize, usize)> {
    let ends: Vec<usize> = data
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    let k = rng.below(ends.len().max(1));
    let end = *ends.get(k)?;
    let start = if k == 0 { 0 } else { ends[k - 1] };
    Some((start, end))
}

/// Repeats one line: a duplicate header, or (sometimes) more lines than any limit allows.
fn repeat_line(rng: &mut Rng, data: &mut Vec<u8>) {
    let Some((start, end)) = random_line(rng, data) else {
        return;
    };
    let times = if rng.one_in(4) {
        100 + rng.below(100)
    } else {
        1 + rng.below(3)
    };
    repeat(data, start, end, times);
}

/// Inserts `times` more copies of `data[start..end]` right after it.
fn repeat(data: &mut Vec<u8>, start: usize, end: usize, times: usize) {
    let piece = data[start..end].to_vec();
    let copies = piece.iter().copied().cycle().take(piece.len() * times);
    data.splice(end..end, copies.collect::<Vec<u8>>());
}

/// Swaps a run of digits (decimal or hex) for a number from [`NUMBERS`].
fn huge_number(rng: &mut Rng, data: &mut Vec<u8>) {
    let starts: Vec<usize> = (0..data.len())
        .filter(|&i| data[i].is_ascii_hexdigit() && (i == 0 || !data[i - 1].is_ascii_hexdigit()))
        .collect();
    if starts.is_empty() {
        return;
    }
    let at = *rng.pick(&starts);
    let end = at
        + data[at..]
            .iter()
            .take_while(|b| b.is_ascii_hexdigit())
            .count();
    data.splice(at..end, rng.pick(NUMBERS).iter().copied());
}

/// Inserts a dictionary header line after the first line (or at a random line start).
fn insert_header(rng: &mut Rng, data: &mut Vec<u8>) {
    let at = match rng.one_in(2) {
        true => data.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1),
        false => random_line(rng, data).map_or(0, |(s, _)| s),
    };
    let mut line = rng.pick(HEADER_LINES).to_vec();
    line.extend_from_slice(b"\r\n");
    data.splice(at..at, line);
}

/// CRLF → LF, LF → CRLF, or CRLF → CR at a random line end.
fn swap_line_ending(rng: &mut Rng, data: &mut Vec<u8>) {
    let Some((_, end)) = random_line(rng, data) else {
        return;
    };
    let lf = end - 1;
    let has_cr = lf > 0 && data[lf - 1] == b'\r';
    match (has_cr, rng.below(2)) {
        (true, 0) => {
            data.remove(lf - 1);
        }
        (true, _) => {
            data.remove(lf);
        }
        (false, _) => data.insert(lf, b'\r'),
    }
}

/// Writes a dictionary token over the input (or inserts it), or flips the case of a range.
fn overwrite_token(rng: &mut Rng, data: &mut Vec<u8>) {
    let at = rng.upto(data.len());
    if rng.one_in(4) {
        let end = (at + 1 + rng.below(16)).min(data.len());
        data[at..end]
            .iter_mut()
            .for_each(|b| *b ^= 0x20 * u8::from(b.is_ascii_alphabetic()));
        return;
    }
    let token = rng.pick(TOKENS);
    let end = match rng.one_in(2) {
        true => (at + token.len()).min(data.len()),
        false => at,
    };
    data.splice(at..end, token.iter().copied());
}
