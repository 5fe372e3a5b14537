//! The hpack-test-case stories (RFC 7541 interoperability corpus, several encoders): every
//! case's wire bytes decode to its headers through our decoder, and every header list
//! round-trips through our encoder. The subset in `tests/http/data/hpack/` runs in the suite;
//! `MORIA_HPACK_STORIES=DIR` runs every `*.json` under `DIR` instead (the whole corpus:
//! `bench/scripts/hpack_stories.sh`).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::hpack::{encode_field, Decoder};

/// One story: a connection's header blocks in order.
#[derive(Deserialize)]
struct Story {
    cases: Vec<Case>,
}

/// One header block and what it decodes to.
#[derive(Deserialize)]
struct Case {
    wire: String,
    headers: Vec<std::collections::BTreeMap<String, String>>,
    header_table_size: Option<usize>,
}

fn stories(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            stories(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn decode(decoder: &mut Decoder, block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut got = Vec::new();
    decoder
        .decode(block, usize::MAX, |n, v| got.push((n.to_vec(), v.to_vec())))
        .unwrap();
    got
}

/// Decodes and re-encodes every case of `path`; answers the number of cases.
fn check_story(path: &Path) -> usize {
    let story: Story = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let table = story
        .cases
        .iter()
        .filter_map(|c| c.header_table_size)
        .max()
        .unwrap_or(4096);
    let mut decoder = Decoder::with_table_size(table);
    let mut ours = Decoder::new();
    for (i, case) in story.cases.iter().enumerate() {
        let want: Vec<(Vec<u8>, Vec<u8>)> = case
            .headers
            .iter()
            .flat_map(|h| h.iter())
            .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect();
        let got = decode(&mut decoder, &unhex(&case.wire));
        assert!(
            got == want,
            "{} case {i}: decoded differently",
            path.display()
        );
        let mut block = Vec::new();
        for (n, v) in &want {
            encode_field(n, v, &mut block);
        }
        let back = decode(&mut ours, &block);
        assert!(back == want, "{} case {i}: round trip", path.display());
    }
    story.cases.len()
}

#[test]
fn every_story_decodes_and_round_trips() {
    let dir = std::env::var_os("MORIA_HPACK_STORIES").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/http/data/hpack"),
        PathBuf::from,
    );
    let mut paths = Vec::new();
    stories(&dir, &mut paths);
    paths.sort();
    assert!(paths.len() >= 21, "stories under {}", dir.display());
    let cases: usize = paths.iter().map(|p| check_story(p)).sum();
    println!("hpack stories: {} stories, {cases} cases", paths.len());
}
