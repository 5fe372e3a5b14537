#!/usr/bin/env bash
# Hello bench: moria-http `hello` vs may_minihttp `peer_minihttp`, same bytes, wrk on loopback,
# plain keep-alive and 16-deep pipelining, RUNS alternating runs each, medians and ratio.
# Servers get one worker pinned to CPU 0; wrk runs one thread pinned to CPU 1.
#
#   bench/scripts/hello.sh [RUNS=5] [SECONDS=5] [CONNECTIONS=64]
set -euo pipefail
RUNS=${1:-5}
SECS=${2:-5}
CONNS=${3:-64}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/target/release
LUA=$ROOT/bench/scripts/pipeline.lua
command -v wrk >/dev/null || { echo "wrk missing: apt-get install -y wrk" >&2; exit 1; }
cargo build --release -q -p moria-bench --bin hello --bin peer_minihttp

taskset -c 0 "$BIN/hello" --listen 127.0.0.1:18080 --workers 1 2>/dev/null &
MORIA=$!
taskset -c 0 "$BIN/peer_minihttp" --listen 127.0.0.1:18081 --workers 1 2>/dev/null &
PEER=$!
trap 'kill $MORIA $PEER 2>/dev/null || true' EXIT
for port in 18080 18081; do
  for _ in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
    sleep 0.1
  done
done

rps() { # port [pipeline depth]
  local port=$1 extra=()
  [ $# -gt 1 ] && extra=(-s "$LUA" "http://127.0.0.1:$port/" -- "$2") || extra=("http://127.0.0.1:$port/")
  timeout $((SECS + 10)) taskset -c 1 wrk -t1 -c"$CONNS" -d"${SECS}s" "${extra[@]}" \
    | awk '/Requests\/sec/ {print $2}'
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '| mode | moria-http req/s | may_minihttp req/s | ratio | runs (moria / minihttp) |\n|---|---|---|---|---|\n'
for mode in plain pipelined; do
  m=(); p=()
  for _ in $(seq "$RUNS"); do
    if [ "$mode" = plain ]; then
      m+=("$(rps 18080)"); p+=("$(rps 18081)")
    else
      m+=("$(rps 18080 16)"); p+=("$(rps 18081 16)")
    fi
  done
  mm=$(printf '%s\n' "${m[@]}" | median)
  pm=$(printf '%s\n' "${p[@]}" | median)
  ratio=$(awk -v a="$mm" -v b="$pm" 'BEGIN {printf "%.2f", a / b}')
  printf '| %s | %.0f | %.0f | %s | %s / %s |\n' "$mode" "$mm" "$pm" "$ratio" \
    "$(printf '%.0f ' "${m[@]}")" "$(printf '%.0f ' "${p[@]}")"
done
