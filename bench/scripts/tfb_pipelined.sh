#!/usr/bin/env bash
# techempower with several --pipelined settings beside the hyper peer, on one endpoint, in
# alternating turns: req/s and the server's user / system CPU ticks per 1,000 requests (from
# /proc). Servers on CPU 0 (run PostgreSQL there too), wrk on CPU 1.
#   DB=postgres://user@127.0.0.1:5432/tfb bench/scripts/tfb_pipelined.sh '/queries?queries=20' [secs] [rounds] [settings]
# settings: space-separated --pipelined values, "hy" for the hyper peer (default "1 2 4 hy").
# Needs a database filled by `techempower --init` and release builds of techempower and
# peer_hyper_tfb (bench/compare.sh builds both).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${DB:?set DB to a postgres:// URL filled by techempower --init}"
path=$1 secs=${2:-4} rounds=${3:-2} settings=${4:-"1 2 4 hy"}
addr=127.0.0.1:${PORT:-9001}
ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }
for _ in $(seq "$rounds"); do
  for s in $settings; do
    if [ "$s" = hy ]; then
      taskset -c 0 target/release/peer_hyper_tfb --db "$DB" --listen "$addr" --workers 1 >/dev/null 2>&1 &
    else
      taskset -c 0 target/release/techempower --db "$DB" --listen "$addr" --workers 1 --pipelined "$s" >/dev/null 2>&1 &
    fi
    pid=$!
    until curl -fs -o /dev/null "http://$addr$path"; do sleep 0.1; done
    taskset -c 1 wrk -t1 -c64 -d1s "http://$addr$path" >/dev/null
    read -r u0 s0 < <(ticks "$pid")
    rps=$(taskset -c 1 wrk -t1 -c64 -d"${secs}s" "http://$addr$path" | awk '/Requests\/sec/{print $2}')
    read -r u1 s1 < <(ticks "$pid")
    awk -v s="$s" -v r="$rps" -v t="$secs" -v u=$((u1 - u0)) -v y=$((s1 - s0)) \
      'BEGIN { n = r * t / 1000; printf "%-4s %10.0f req/s  user %.2f  sys %.2f ticks per 1k requests\n", s, r, u / n, y / n }'
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
