#!/usr/bin/env bash
# The whole hpack-test-case corpus (446 stories, 14 encoders, ~64 MB; about 6 CPU minutes in the debug build) through moria-http's HPACK
# decoder and encoder: the suite runs a 21-story subset (http/tests/http/data/hpack/); this runs
# the same test over every story, taken from the httlib-hpack crate's fixtures.
# Usage: bench/scripts/hpack_stories.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A throwaway package that depends on httlib-hpack, so cargo fetches it into its registry cache.
mkdir -p "$work/src"
printf '[package]\nname = "stories"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nhttlib-hpack = "=0.1.3"\n' >"$work/Cargo.toml"
echo 'fn main() {}' >"$work/src/main.rs"
dir=$(cargo metadata --manifest-path "$work/Cargo.toml" --format-version 1 |
    python3 -c 'import json,sys; m=json.load(sys.stdin); print([p["manifest_path"] for p in m["packages"] if p["name"]=="httlib-hpack"][0])')
fixtures="$(dirname "$dir")/fixtures"
MORIA_HPACK_STORIES="$fixtures" cargo test -p moria-http --lib hpack_stories -- --nocapture 2>&1 |
    grep -E 'hpack stories|test result|panicked'
