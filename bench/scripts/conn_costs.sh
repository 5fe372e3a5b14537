#!/usr/bin/env bash
# What one keep-alive hello request costs each server at a given connection count, from the
# kernel's counters rather than req/s (which a shared machine's load moves): CPU time, syscalls
# by name, context switches of the server's threads, and the events each epoll_wait returned,
# per request, while `wrk -t1 -cCONNS` runs on CPU 1 against one worker on CPU 0; then the
# context switches per request by thread name (voluntary + involuntary, from /proc/PID/task:
# which thread switches, e.g. the worker preempted or a runtime thread's own wake-ups).
#
#   bench/scripts/conn_costs.sh CONNS SECONDS [SERVER…]   # SERVER: hello, peer_minihttp, peer_hyper_hello
#
# Runs the release binaries under $CARGO_TARGET_DIR (default target/): build them first
# (`cargo build --release -p moria-bench --bin hello --bin peer_minihttp --bin peer_hyper_hello`).
# Each server gets a 2-second warm-up at the same load, then one counted run; servers take turns
# in the order given. Needs wrk and perf (packages wrk, linux-perf), run as root (tracepoints).
set -euo pipefail
CONNS=${1:?usage: conn_costs.sh CONNS SECONDS [SERVER…]}
SECS=${2:?usage: conn_costs.sh CONNS SECONDS [SERVER…]}
shift 2
if [ $# -gt 0 ]; then SERVERS=("$@"); else SERVERS=(hello peer_minihttp peer_hyper_hello); fi
BIN=${CARGO_TARGET_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/target}/release
for t in wrk perf; do
  command -v "$t" >/dev/null || { echo "conn_costs.sh: $t missing (apt-get install -y ${t/perf/linux-perf})" >&2; exit 1; }
done
SYSCALLS=(recvfrom sendto read write writev epoll_wait epoll_ctl futex accept4 sched_yield)
EVENTS=context-switches,task-clock
for s in "${SYSCALLS[@]}"; do EVENTS+=",syscalls:sys_enter_$s"; done
TMP=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$TMP"' EXIT
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); wrk -t1 -c$CONNS -d${SECS}s on CPU 1, one worker on CPU 0"
printf '%-18s %9s %8s %9s' server req/s 'µs cpu' 'ctxsw'
for s in "${SYSCALLS[@]}"; do printf ' %10s' "$s"; done
printf ' %12s\n' 'events/wait'
for name in "${SERVERS[@]}"; do
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  taskset -c 0 "$BIN/$name" --listen "127.0.0.1:$PORT" --workers 1 2>/dev/null &
  SERVER=$!
  until python3 -c "import socket; socket.create_connection(('127.0.0.1',$PORT))" 2>/dev/null; do sleep 0.1; done
  taskset -c 1 wrk -t1 -c"$CONNS" -d2s "http://127.0.0.1:$PORT/" >/dev/null
  switches() {
    for t in /proc/"$SERVER"/task/*; do
      echo "$(basename "$t") $(cat "$t/comm" | tr ' ' _) $(awk '/ctxt_switches/ {n += $2} END {print n}' "$t/status")"
    done
  }
  switches >"$TMP/threads.before"
  perf stat -x, -o "$TMP/stat" -e "$EVENTS" -p "$SERVER" &
  STAT=$!
  perf record -q -o "$TMP/rec" -e syscalls:sys_exit_epoll_wait -p "$SERVER" 2>/dev/null &
  REC=$!
  sleep 0.3
  taskset -c 1 wrk -t1 -c"$CONNS" -d"${SECS}s" "http://127.0.0.1:$PORT/" >"$TMP/wrk"
  switches >"$TMP/threads.after"
  kill -INT $STAT $REC
  wait $STAT $REC 2>/dev/null || true
  kill $SERVER
  wait $SERVER 2>/dev/null || true
  REQS=$(awk '/requests in/ {print $1}' "$TMP/wrk")
  RPS=$(awk '/Requests\/sec/ {print $2}' "$TMP/wrk")
  # perf counts from 0.3 s before wrk until it ends: the idle edge adds a few wake-ups only.
  printf '%-18s %9.0f' "$name" "$RPS"
  awk -F, -v n="$REQS" '$3=="task-clock" {cpu=$1*1000/n} $3=="context-switches" {cs=$1/n}
    END {printf " %8.2f %9.4f", cpu, cs}' "$TMP/stat"
  for s in "${SYSCALLS[@]}"; do
    awk -F, -v n="$REQS" -v e="syscalls:sys_enter_$s" '$3==e {printf " %10.4f", $1/n}' "$TMP/stat"
  done
  # Mean events per epoll_wait that returned any (the engine's, the lot's and the runtime's).
  perf script -i "$TMP/rec" -F trace 2>/dev/null | python3 -c '
import sys
ret = [int(w, 16) for l in sys.stdin for w in l.split() if w.startswith("0x")]
got = [r for r in ret if 0 < r < 1 << 31]
print(" %12.1f" % (sum(got) / len(got) if got else 0))'
  # Context switches per request by thread name (threads of one name summed).
  awk -v n="$REQS" 'NR == FNR {before[$1] = $3; next}
    {by[$2] += $3 - before[$1]}
    END {printf "%-18s", "  by thread:"; for (t in by) if (by[t] > 0) printf " %s %.4f", t, by[t] / n; print ""}' \
    "$TMP/threads.before" "$TMP/threads.after"
done
