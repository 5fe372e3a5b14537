#!/usr/bin/env bash
# Syscalls per request and per connection, Moria's file server beside nginx (one worker each):
# `strace -c -f` attached while exactly 10,000 keep-alive requests over 100 connections, then
# 10,000 one-request connections (`Connection: close`), fetch the 1312-byte file. Builds the
# file server and the `compare` binary in release, then runs `compare --syscalls` (needs strace
# and nginx-light: installed with apt-get when run as root, else the command is printed).
# strace slows the servers many times over: only the counts mean anything. See bench/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p moria-examples --bin fileserver
cargo build --release -q -p moria-bench --bin compare
exec target/release/compare --syscalls "$@"
