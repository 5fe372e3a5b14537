#!/usr/bin/env bash
# flate2's two pure-Rust backends side by side: miniz_oxide (flate2's default) and zlib-rs.
# One small program, built twice (release) with each backend, gzips the same 32 MiB of text
# (this repository's .rs and .md files, repeated) at level 6; the two builds run alternately,
# ROUNDS times each, and the medians are printed with the compressed sizes.
#
#   bench/scripts/gzip_backends.sh [ROUNDS]        # default 7
set -euo pipefail
rounds=${1:-7}
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
find "$repo" -path "$repo/target" -prune -o \( -name '*.rs' -o -name '*.md' \) -type f -print0 |
  sort -z | xargs -0 cat >"$work/seed.txt"
python3 - "$work/seed.txt" "$work/text.txt" <<'PY'
import sys
seed = open(sys.argv[1], "rb").read()
out = (seed * (32 * 2**20 // len(seed) + 1))[: 32 * 2**20]
open(sys.argv[2], "wb").write(out)
PY
mkdir -p "$work/gz/src"
cat >"$work/gz/Cargo.toml" <<'TOML'
[package]
name = "gz"
version = "0.1.0"
edition = "2021"
[features]
zlib-rs = ["flate2/zlib-rs"]
[dependencies]
flate2 = { version = "1", default-features = false }
[profile.release]
codegen-units = 1
TOML
cat >"$work/gz/src/main.rs" <<'RS'
use std::io::Write;
fn main() {
    let data = std::fs::read(std::env::args().nth(1).expect("file")).expect("read");
    let t = std::time::Instant::now();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    e.write_all(&data).expect("gzip");
    let out = e.finish().expect("gzip");
    println!("{:.3} {}", t.elapsed().as_secs_f64(), out.len());
}
RS
(cd "$work/gz" && cargo build -q --release --features flate2/rust_backend --target-dir "$work/t-miniz" \
  && cargo build -q --release --features zlib-rs --target-dir "$work/t-zlibrs")
for i in $(seq "$rounds"); do
  echo "miniz_oxide $("$work/t-miniz/release/gz" "$work/text.txt")" >>"$work/runs"
  echo "zlib-rs $("$work/t-zlibrs/release/gz" "$work/text.txt")" >>"$work/runs"
done
echo "32 MiB of text, gzip level 6, $rounds alternating runs each; median seconds:"
for b in miniz_oxide zlib-rs; do
  grep "^$b " "$work/runs" | sort -k2 -n | awk -v b="$b" '{t[NR]=$2; s=$3} END {
    m = t[int((NR + 1) / 2)]; printf "%-12s %.3f s  %.0f MiB/s  %d bytes\n", b, m, 32 / m, s }'
done
