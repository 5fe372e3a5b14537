#!/usr/bin/env bash
# The application layer's cost (issue 30): `hello` and techempower's `/json` from two release
# builds (BEFORE_DIR, AFTER_DIR: folders holding `hello` and `techempower`), and AFTER's
# `hello --layers` (a router with the request-id, access-log and CORS layers, access lines
# written by env_logger to /dev/null, wrk sending an Origin). Server on CPU 0 with one worker,
# wrk (c100) on CPU 1; each round runs every variant once, in turn; per run: req/s and the
# server's CPU time (utime + stime from /proc) per request, the figure that survives a shared
# machine.
#
#   ROUNDS=5 SECS=4 bench/scripts/app_layers_ab.sh BEFORE_DIR AFTER_DIR
set -u
BASE=${1:?BEFORE_DIR}
NEW=${2:?AFTER_DIR}
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-4}
command -v wrk >/dev/null || { echo "wrk missing: apt-get install -y wrk" >&2; exit 1; }
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
cpu_ticks() { awk '{print $14+$15}' /proc/$1/stat; }
run() { # name cmd... ; env WRK_H, URLPATH
  local name=$1; shift
  local p; p=$(port)
  MORIA_LISTEN=127.0.0.1:$p taskset -c 0 "$@" --listen 127.0.0.1:$p >/dev/null 2>&1 &
  local pid=$!
  for i in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$p${URLPATH}" && break; sleep 0.1; done
  taskset -c 1 wrk -t1 -c100 -d1s ${WRK_H:+-H "$WRK_H"} "http://127.0.0.1:$p${URLPATH}" >/dev/null 2>&1
  local t0; t0=$(cpu_ticks $pid)
  local out; out=$(taskset -c 1 wrk -t1 -c100 -d${SECS}s ${WRK_H:+-H "$WRK_H"} "http://127.0.0.1:$p${URLPATH}" 2>&1)
  local t1; t1=$(cpu_ticks $pid)
  kill $pid; wait $pid 2>/dev/null
  local reqs; reqs=$(echo "$out" | awk '/requests in/{print $1}')
  local rps; rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
  local non2xx; non2xx=$(echo "$out" | awk '/Non-2xx/{print $NF}')
  local us; us=$(python3 -c "print(round(($t1-$t0)*10000/$reqs,2))")
  echo "$name rps=$rps cpu_us_per_req=$us non2xx=${non2xx:-0}"
}
for r in $(seq 1 $ROUNDS); do
  URLPATH=/ run hello-before $BASE/hello --workers 1
  URLPATH=/ run hello-after $NEW/hello --workers 1
  URLPATH=/json run tfbjson-before $BASE/techempower --workers 1 --db :memory:
  URLPATH=/json run tfbjson-after $NEW/techempower --workers 1 --db :memory:
  WRK_H="Origin: https://x.example" URLPATH=/ RUST_LOG=moria_http::route_access=info run hello-layers $NEW/hello --workers 1 --layers
done
