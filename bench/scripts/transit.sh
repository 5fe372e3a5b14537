#!/usr/bin/env bash
# Transit bench (issue 33): Moria's `transit` example against `peer_transit_axum` (the published
# Rust entry's design) on gtfs_gen's MBTA-shaped data. Per server and run: load time (its
# `loaded … in X ms` line), RSS after load (VmRSS), wrk on the small mix at c1, c10 and c50 and on
# the JSON-heavy mix at c50 (req/s and p99), peak RSS after the heavy mix (VmHWM). Servers take
# turns (the order alternates between runs), one worker pinned to CPU 0, wrk one thread on CPU 1.
# Prints one markdown table of medians over the runs with a Moria / peer ratio row; every run's
# figures go to target/bench/transit-TIME.tsv.
#
#   bench/scripts/transit.sh [--scale F] [--seconds S] [--runs N] [--seed N] [--only moria|peer]
set -euo pipefail
SCALE=1 SECS=10 RUNS=3 SEED=1 ONLY=
while [ $# -gt 0 ]; do
  case $1 in
    --scale) SCALE=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    *) echo "usage: $0 [--scale F] [--seconds S] [--runs N] [--seed N] [--only moria|peer]" >&2; exit 2 ;;
  esac
done
case $ONLY in
  '') SERVERS=(moria peer) ;;
  moria | peer) SERVERS=("$ONLY") ;;
  *) echo "--only takes moria or peer, not $ONLY" >&2; exit 2 ;;
esac

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release
LUA=$ROOT/bench/scripts/transit_mix.lua
DATA=$TARGET/bench/transit
OUT=$TARGET/bench/transit-$(date -u +%Y%m%d-%H%M%S).tsv

for tool in wrk curl; do
  command -v $tool >/dev/null && continue
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y $tool >&2 || { apt-get update >&2 && apt-get install -y $tool >&2; }
  else
    echo "$tool missing: apt-get install -y $tool" >&2; exit 1
  fi
done

cd "$ROOT"
cargo build --release -q -p moria-bench --bin gtfs_gen --bin peer_transit_axum
[ "$ONLY" = peer ] || cargo build --release -q -p moria-examples --bin transit

# generated.txt is written last: present with this seed and scale means the set is complete.
if ! awk -F= -v seed="$SEED" -v scale="$SCALE" '
    $1 == "seed" && $2 == seed { s = 1 } $1 == "scale" && $2 + 0 == scale + 0 { c = 1 }
    END { exit !(s && c) }' "$DATA/generated.txt" 2>/dev/null; then
  "$BIN/gtfs_gen" --out "$DATA" --seed "$SEED" --scale "$SCALE" >&2
fi

binary() { [ "$1" = moria ] && echo "$BIN/transit" || echo "$BIN/peer_transit_axum"; }
free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 20000))
    (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null || { echo $port; return; }
  done
}
kib_to_mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
status_kib() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }

# wrk CONNS ROUTES_FILE PORT -> "req/s p99_ms non2xx_and_errors"
load() {
  timeout $((SECS + 30)) taskset -c 1 wrk -t1 -c"$1" -d"${SECS}s" --timeout 10s --latency -s "$LUA" \
    "http://127.0.0.1:$3/" -- "$2" | awk '
      function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
      /^ +99%/ { p99 = ms($2) }
      /Requests\/sec/ { rps = $2 }
      /Non-2xx/ { bad += $NF }
      /Socket errors/ { gsub(/,/, ""); bad += $4 + $6 + $8 + $10 }
      END { printf "%s %.2f %d\n", rps, p99, bad }'
}

declare -A V # "server metric" -> values over runs, space-separated
record() { V["$1 $2"]+="$3 "; }
printf 'run\tserver\tmetric\tvalue\n' >"$OUT"

measure() { # server run
  local s=$1 run=$2 port pid log
  port=$(free_port)
  log=$(mktemp)
  taskset -c 0 "$(binary "$s")" --gtfs "$DATA" --listen "127.0.0.1:$port" --workers 1 2>"$log" &
  pid=$!
  until (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; do
    kill -0 $pid 2>/dev/null || { echo "$s exited before listening:" >&2; cat "$log" >&2; exit 1; }
    sleep 0.05
  done
  local row=("load_ms $(sed -n 's/.*loaded .* in \([0-9.]*\) ms.*/\1/p' "$log" | head -1)")
  row+=("rss_mib $(kib_to_mib "$(status_kib $pid VmRSS)")")
  for route in $(head -1 "$DATA/routes_heavy.txt") nonexistent-route; do
    curl -s "http://127.0.0.1:$port/schedules/$route" | sha256sum | cut -c1-16 >>"$DATA/answers-$s-$run"
  done
  for mix in small:1 small:10 small:50 heavy:50; do
    read -r rps p99 bad < <(load "${mix#*:}" "$DATA/routes_${mix%:*}.txt" "$port")
    row+=("${mix/:/_c}_rps $rps" "${mix/:/_c}_p99 $p99" "${mix/:/_c}_bad $bad")
  done
  row+=("peak_mib $(kib_to_mib "$(status_kib $pid VmHWM)")")
  kill $pid && wait $pid 2>/dev/null || true
  rm -f "$log"
  for kv in "${row[@]}"; do
    record "$s" "${kv% *}" "${kv#* }"
    printf '%s\t%s\t%s\t%s\n' "$run" "$s" "${kv% *}" "${kv#* }" >>"$OUT"
  done
}

rm -f "$DATA"/answers-*
for run in $(seq "$RUNS"); do
  order=("${SERVERS[@]}")
  [ $((run % 2)) = 0 ] && [ ${#order[@]} = 2 ] && order=("${order[1]}" "${order[0]}")
  for s in "${order[@]}"; do
    echo "run $run: $s" >&2
    measure "$s" "$run"
  done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
m() { echo "${V["$1 $2"]}" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "–"}'; }
MIXES=(small_c1 small_c10 small_c50 heavy_c50)

echo
echo "Transit bench, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo '+dirty')."
echo "Machine: $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), Linux $(uname -r)."
echo "Data: gtfs_gen scale $SCALE seed $SEED, $(sed -n 's/^trips=//p' "$DATA/generated.txt") trips, $(sed -n 's/^stop_times=//p' "$DATA/generated.txt") stop times."
echo "Load: $RUNS runs of ${SECS} s per mix, medians; servers on CPU 0 (1 worker), wrk -t1 on CPU 1; p99 in ms."
echo
echo "| server | load ms | RSS after load MiB | small c1 req/s / p99 ms | small c10 | small c50 | heavy c50 | peak RSS MiB | non-2xx + errors |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for s in "${SERVERS[@]}"; do
  name=$([ "$s" = moria ] && echo "Moria transit" || echo "axum peer")
  line="| $name | $(m "$s" load_ms) | $(m "$s" rss_mib)"
  bad=0
  for x in "${MIXES[@]}"; do
    line+=" | $(printf '%.0f' "$(m "$s" "${x}_rps")") / $(m "$s" "${x}_p99")"
    bad=$((bad + $(echo "${V["$s ${x}_bad"]}" | awk '{for (i = 1; i <= NF; i++) t += $i} END {print t + 0}')))
  done
  echo "$line | $(m "$s" peak_mib) | $bad |"
done
if [ ${#SERVERS[@]} = 2 ]; then
  line="| **Moria / peer** | $(ratio "$(m moria load_ms)" "$(m peer load_ms)") | $(ratio "$(m moria rss_mib)" "$(m peer rss_mib)")"
  for x in "${MIXES[@]}"; do
    line+=" | $(ratio "$(m moria "${x}_rps")" "$(m peer "${x}_rps")") / $(ratio "$(m moria "${x}_p99")" "$(m peer "${x}_p99")")"
  done
  echo "$line | $(ratio "$(m moria peak_mib)" "$(m peer peak_mib)") | |"
  for run in $(seq "$RUNS"); do
    cmp -s "$DATA/answers-moria-$run" "$DATA/answers-peer-$run" ||
      echo "WARNING: run $run: Moria's and the peer's answers differ (sha256 in $DATA/answers-*)"
  done
fi
echo
echo "Targets (issue 33): load ≤ 0.5, RSS after load ≤ 0.2, peak RSS ≤ 0.3, req/s ≥ 1.0 on every mix. Every run: $OUT"
