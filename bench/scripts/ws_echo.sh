#!/usr/bin/env bash
# One WebSocket echo run and the server's CPU per round trip:
#   N=1000 S=5 bench/scripts/ws_echo.sh target/release/echo --listen 127.0.0.1:0 --ws
#   N=1000 S=5 bench/scripts/ws_echo.sh target/release/peer_ws_tokio --listen
# The server runs on CPU 0 with one worker (the address and `--workers 1` are added after the
# given arguments), ws_load (release, in ${CARGO_TARGET_DIR:-target}/release, or WS_LOAD=PATH)
# on CPU 1 with N connections for S seconds. Prints ws_load's report, the server's CPU time
# from the moment all N TCP connections are established (their handshakes and closes fall
# inside) to the end divided by the round trips
# (load-independent, unlike the rate), the part of it spent by Moria's coarse-timer sweeper
# thread, and the load average. STRACE=1 also counts the server's syscalls per round trip
# over the same window (`strace -c -f`; it slows the run, so that run's CPU figure is not
# comparable). `compare --scenario ws-echo` gives the rate side by side.
set -u
OUTFILE=$(mktemp)
N=${N:-1000}
WS_LOAD=${WS_LOAD:-${CARGO_TARGET_DIR:-$(dirname "$0")/../../target}/release/ws_load}
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c 0 "$@" 127.0.0.1:$PORT --workers 1 >/dev/null 2>&1 &
PID=$!
for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break; sleep 0.1; done
cpu() { awk '{print $14+$15}' /proc/$PID/stat; }
# Moria's coarse-timer sweeper thread (the deadlines of `read_within`), if the server has one.
sweeper() { for t in /proc/$PID/task/*; do [ "$(cat $t/comm)" = moria-coarse-ti ] && awk '{print $14+$15}' $t/stat; done; echo 0; }
taskset -c 1 "$WS_LOAD" --workers 1 echo --url "ws://127.0.0.1:$PORT/" --conns $N --seconds ${S:-5} > "$OUTFILE" 2>&1 &
LP=$!
while kill -0 $LP 2>/dev/null && [ "$(ss -Htn state established "( sport = :$PORT )" | wc -l)" -lt $N ]; do sleep 0.05; done
C0=$(cpu) W0=$(sweeper | head -1)
if [ "${STRACE:-0}" = 1 ]; then
    strace -c -f -p $PID -o "$OUTFILE.strace" &
    SP=$!
fi
wait $LP
C1=$(cpu) W1=$(sweeper | head -1)
if [ "${STRACE:-0}" = 1 ]; then kill -INT $SP; wait $SP 2>/dev/null; fi
kill $PID; wait $PID 2>/dev/null
OUT=$(tail -1 "$OUTFILE")
MSGS=$(echo "$OUT" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["messages"])' 2>/dev/null || echo 0)
echo "$(basename $1) c$N $OUT cpu_us_per_msg=$(python3 -c "print(round(($C1-$C0)*1e4/max($MSGS,1),2))") of_which_sweeper=$(python3 -c "print(round(($W1-$W0)*1e4/max($MSGS,1),2))") load=$(cut -d' ' -f1 /proc/loadavg)"
if [ "${STRACE:-0}" = 1 ]; then
    python3 - "$OUTFILE.strace" "$MSGS" <<'PY'
import sys
msgs = max(int(sys.argv[2]), 1)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 5 and f[3].isdigit():
        print(f"  {f[-1]:<16} {int(f[3]) / msgs:8.3f} calls per round trip")
PY
    rm -f "$OUTFILE.strace"
fi
rm -f "$OUTFILE"
