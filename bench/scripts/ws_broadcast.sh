#!/usr/bin/env bash
# One WebSocket broadcast run and the server's CPU per delivered message:
#   N=10000 S=4 bench/scripts/ws_broadcast.sh target/release/chat --max-connections 16384
#   N=10000 S=4 bench/scripts/ws_broadcast.sh target/release/peer_ws_tokio
# The server runs on CPU 0 with one worker (`--listen` and `--workers 1` are added), ws_load
# (release, in ${CARGO_TARGET_DIR:-target}/release, or WS_LOAD=PATH) on CPU 1 with N members
# for S seconds. Prints ws_load's report, the server's CPU time from the moment all N+1
# members are connected to the end divided by the messages delivered (load-independent, unlike
# the rate), how long the members took to connect, the machine's accept-queue overflows
# meanwhile (`ListenOverflows`, every process's), and the load average. `compare --scenario ws-broadcast` gives the rate side by side.
set -u
OUTFILE=$(mktemp)
N=${N:-10000}
WS_LOAD=${WS_LOAD:-${CARGO_TARGET_DIR:-$(dirname "$0")/../../target}/release/ws_load}
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c 0 "$@" --listen 127.0.0.1:$PORT --workers 1 >/dev/null 2>&1 &
PID=$!
for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
cpu() { awk '{print $14+$15}' /proc/$PID/stat; }
overflows() { awk '/^TcpExt:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "ListenOverflows") c = i; h = 1 } else print $c }' /proc/net/netstat; }
T0=$(date +%s.%N) O0=$(overflows)
taskset -c 1 "$WS_LOAD" --workers 1 broadcast --url "ws://127.0.0.1:$PORT/ws/bench?name=bench" --subscribers $N --seconds ${S:-3} > "$OUTFILE" 2>&1 &
LP=$!
while kill -0 $LP 2>/dev/null && [ "$(ss -Htn state established "( sport = :$PORT )" | wc -l)" -le $N ]; do sleep 0.05; done
C0=$(cpu) T1=$(date +%s.%N) O1=$(overflows)
wait $LP
C1=$(cpu)
kill $PID; wait $PID 2>/dev/null
OUT=$(tail -1 "$OUTFILE")
rm -f "$OUTFILE"
MSGS=$(echo "$OUT" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["messages"])' 2>/dev/null || echo 0)
echo "$(basename $1) $OUT cpu_us_per_msg=$(python3 -c "print(round(($C1-$C0)*1e4/max($MSGS,1),2))") setup_s=$(python3 -c "print(round($T1-$T0,1))") overflows=$((O1-O0)) load=$(cut -d' ' -f1 /proc/loadavg)" | sed 's/"p50_ms":null,"p99_ms":null,//'
