#!/usr/bin/env bash
# Moria vs its peers on this machine: builds the servers and the `compare` binary in release,
# then runs it (arguments are passed on: --quick, --scenario NAME, --runs N, --seconds S,
# --list). See bench/README.md, "Benchmarking".
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p moria-examples --bin techempower --bin fileserver --bin transit --bin echo --bin chat
cargo build --release -q -p moria-bench --bin compare --bin hello --bin peer_minihttp --bin peer_hyper_hello --bin peer_hyper_tfb \
  --bin peer_transit_axum --bin gtfs_gen --bin peer_ws_tokio --bin ws_load --bin tls_load
exec target/release/compare "$@"
