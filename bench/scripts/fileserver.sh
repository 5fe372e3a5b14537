#!/usr/bin/env bash
# File server bench: moria's `fileserver` example vs nginx serving the same file (by default 1312
# bytes, the file size of Mordor's siege benchmark), on loopback, over HTTP and HTTPS.
#
# Each server gets one worker pinned to CPU $SERVER_CPU; the load generator is pinned to CPU
# $CLIENT_CPU. Loads: wrk -t1 -c100 and -c500 (keep-alive, 10 s), and siege -b -c500 -t10S
# (Mordor's command; siege's default `connection = close`, so one TCP connection per request).
# Runs alternate between the servers, RUNS times; the table gives medians, the ratio to nginx,
# failures, server RSS after the run and server CPU seconds (user + system, every thread and
# process of the server) per 100k requests. Every run is bounded by `timeout`: a load generator
# that has to be killed (siege can hang at shutdown) counts as a failed run.
#
#   bench/scripts/fileserver.sh [RUNS=3] [SECONDS=10]
#   ONLY="wrk100" bench/scripts/fileserver.sh    # only rows whose load name matches
#   MORIA_FLAGS="--no-inline-io" ...              # extra fileserver flags
#   SIZE=1048576 ...                              # another file size (bytes)
#   CACHE=10 ...                                  # both servers keep open files for 10 s
#                                                 # (--cache-secs / open_file_cache)
set -euo pipefail
RUNS=${1:-3}
SECS=${2:-10}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
ONLY=${ONLY:-}
MORIA_FLAGS=${MORIA_FLAGS:-}
SIZE=${SIZE:-1312}
CACHE=${CACHE:-0}
NGINX_CACHE=""
if [ "$CACHE" -gt 0 ]; then
  MORIA_FLAGS="$MORIA_FLAGS --cache-secs $CACHE"
  NGINX_CACHE="open_file_cache max=1024 inactive=60s; open_file_cache_valid ${CACHE}s;"
fi
FILE=file$SIZE
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/target/release/fileserver
P_HTTP=18180 P_HTTPS=18543 N_HTTP=18181 N_HTTPS=18544

need() { # command package
  command -v "$1" >/dev/null && return
  echo "installing $2" >&2
  if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq >&2; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2
}
need wrk wrk
need siege siege
need nginx nginx-light
need openssl openssl
need python3 python3-minimal
ulimit -n "$(ulimit -Hn)"
cargo build --release -q -p moria-examples --bin fileserver

WORK=$(mktemp -d /tmp/moria-fileserver-bench.XXXXXX)
chmod 755 "$WORK" # nginx workers run as an unprivileged user
mkdir -p "$WORK/www" "$WORK/nginx"
head -c "$SIZE" /dev/urandom >"$WORK/www/$FILE"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj /CN=localhost -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null

# nginx configured like the fileserver: one worker, sendfile, ETag/Last-Modified (defaults),
# gzip_static (our precompressed-sibling lookup), no access log, unlimited keep-alive requests,
# TLS 1.2/1.3 with an ECDSA P-256 certificate.
cat >"$WORK/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
worker_rlimit_nofile 16384;
events { worker_connections 8192; multi_accept on; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 60s;
  keepalive_requests 100000000;
  gzip_static on;
  $NGINX_CACHE
  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_certificate $WORK/cert.pem;
  ssl_certificate_key $WORK/key.pem;
  client_body_temp_path $WORK/nginx;
  types { application/octet-stream bin; }
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:$N_HTTP backlog=1024;
    listen 127.0.0.1:$N_HTTPS ssl backlog=1024;
    root $WORK/www;
  }
}
EOF
cat >"$WORK/siegerc" <<EOF
verbose = false
quiet = true
json_output = true
show-logfile = false
logging = false
parser = false
limit = 1000
protocol = HTTP/1.1
connection = close
accept-encoding = gzip, deflate
EOF

# shellcheck disable=SC2086
taskset -c "$SERVER_CPU" "$BIN" --root "$WORK/www" --http 127.0.0.1:$P_HTTP \
  --https 127.0.0.1:$P_HTTPS --workers 1 $MORIA_FLAGS >"$WORK/moria.log" 2>&1 &
MORIA=$!
taskset -c "$SERVER_CPU" nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" >"$WORK/nginx.log" 2>&1 &
NGINX=$!
cleanup() {
  kill -INT $MORIA 2>/dev/null || true
  kill -QUIT $NGINX 2>/dev/null || true
  wait $MORIA $NGINX 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
for port in $P_HTTP $P_HTTPS $N_HTTP $N_HTTPS; do
  for _ in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
    sleep 0.1
  done
done
curl -sf -o /dev/null "http://127.0.0.1:$P_HTTP/$FILE" || { cat "$WORK/moria.log"; exit 1; }
curl -sf -o /dev/null "http://127.0.0.1:$N_HTTP/$FILE" || { cat "$WORK/nginx.log" "$WORK/nginx/error.log"; exit 1; }

pids_of() { # server -> its process ids (nginx: master and workers)
  if [ "$1" = moria ]; then echo $MORIA; else echo $NGINX $(pgrep -P $NGINX); fi
}
cpu_ticks() { local t=0; for p in $(pids_of "$1"); do
  t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }
rss_kb() { local t=0; for p in $(pids_of "$1"); do
  t=$((t + $(awk '/VmRSS/ {print $2}' "/proc/$p/status"))); done; echo $t; }
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; u = v; sub(/^[0-9.]+/, "", u);
  if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000;
  printf "%.3f", n }'; }

# One run: server proto load -> a TSV line:
# server proto load requests rps latency_ms p99_ms failures rss_kb cpu_s
run() {
  local server=$1 proto=$2 load=$3 port url out rc=0 before after
  case "$server/$proto" in
    moria/http) port=$P_HTTP ;; moria/https) port=$P_HTTPS ;;
    nginx/http) port=$N_HTTP ;; nginx/https) port=$N_HTTPS ;;
  esac
  url="$proto://127.0.0.1:$port/$FILE"
  before=$(cpu_ticks "$server")
  case "$load" in
    wrk*)
      out=$(timeout -k 5 $((SECS + 20)) taskset -c "$CLIENT_CPU" wrk -t1 -c"${load#wrk}" \
        -d"${SECS}s" --latency "$url" 2>&1) || rc=$?
      after=$(cpu_ticks "$server")
      if [ $rc -ne 0 ]; then echo -e "$server\t$proto\t$load\t0\t0\t0\t0\tkilled\t$(rss_kb "$server")\t0"; return; fi
      local reqs rps lat p99 fail
      reqs=$(awk '/requests in/ {print $1}' <<<"$out")
      rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
      lat=$(to_ms "$(awk '/^ +Latency / {print $2; exit}' <<<"$out")")
      p99=$(to_ms "$(awk '$1 == "99%" {print $2}' <<<"$out")")
      fail=$(awk '/Socket errors/ {gsub(/,/, ""); s += $4 + $6 + $8 + $10}
                  /Non-2xx/ {s += $NF} END {print s + 0}' <<<"$out")
      ;;
    siege)
      out=$(timeout -k 5 $((SECS + 30)) taskset -c "$CLIENT_CPU" siege -R "$WORK/siegerc" -b \
        -c500 -t"${SECS}S" "$url" 2>/dev/null) || rc=$?
      after=$(cpu_ticks "$server")
      if [ $rc -ne 0 ] || ! grep -q transactions <<<"$out"; then
        echo -e "$server\t$proto\t$load\t0\t0\t0\t0\tkilled\t$(rss_kb "$server")\t0"; return; fi
      read -r reqs rps lat fail < <(sed -n '/{/,/}/p' <<<"$out" | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(d["transactions"], d["transaction_rate"], d["response_time"] * 1000, d["failed_transactions"])')
      p99=-
      ;;
  esac
  local cpu
  cpu=$(awk -v a="$before" -v b="$after" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", (b - a) / hz}')
  echo -e "$server\t$proto\t$load\t$reqs\t$rps\t$lat\t$p99\t$fail\t$(rss_kb "$server")\t$cpu"
}

RESULTS=$WORK/results.tsv
: >"$RESULTS"
for proto in http https; do
  for load in wrk100 wrk500 siege; do
    case "$load" in *"$ONLY"*) ;; *) continue ;; esac
    for i in $(seq "$RUNS"); do
      for server in moria nginx; do
        line=$(run $server $proto $load)
        echo "$line" >>"$RESULTS"
        echo "run $i: $line" >&2
      done
    done
  done
done

echo
echo "file: $SIZE bytes; moria flags: ${MORIA_FLAGS:-none}; nginx extra: ${NGINX_CACHE:-none}"
echo "machine: $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2}'), $(nproc) CPUs," \
  "$(uname -r), $(nginx -v 2>&1 | sed 's/.*: //'), $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2)," \
  "$(siege --version 2>&1 | head -1); load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$RESULTS" "$RUNS" <<'EOF'
import sys, statistics as st
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
runs = sys.argv[2]
def med(xs):
    xs = [float(x) for x in xs if x not in ("-", "killed")]
    return st.median(xs) if xs else float("nan")
keys = []
for r in rows:
    if (r[1], r[2]) not in keys:
        keys.append((r[1], r[2]))
print(f"medians of {runs} runs; CPU = server user+system seconds per 100k requests; "
      "failures = socket errors + non-2xx (wrk) or failed transactions (siege), summed over runs; "
      "killed = runs ended by timeout")
print("| proto | load | moria req/s | nginx req/s | ratio | moria lat ms (p99) | nginx lat ms (p99) "
      "| failures moria / nginx | killed m / n | RSS MiB m / n | CPU s/100k moria | nginx | ratio |")
print("|---|---|---:|---:|---:|---:|---:|---|---|---|---:|---:|---:|")
for proto, load in keys:
    out = {}
    for s in ("moria", "nginx"):
        rs = [r for r in rows if r[0] == s and r[1] == proto and r[2] == load]
        ok = [r for r in rs if r[7] != "killed"]
        cpu = [float(r[9]) / float(r[3]) * 1e5 for r in ok if float(r[3]) > 0]
        out[s] = dict(
            rps=med(r[4] for r in ok), lat=med(r[5] for r in ok), p99=med(r[6] for r in ok),
            fail=sum(int(float(r[7])) for r in ok), killed=len(rs) - len(ok),
            rss=med(r[8] for r in rs) / 1024, cpu=st.median(cpu) if cpu else float("nan"))
    m, n = out["moria"], out["nginx"]
    p99 = lambda d: "" if d["p99"] != d["p99"] else f" ({d['p99']:.2f})"
    print(f"| {proto} | {load} | {m['rps']:.0f} | {n['rps']:.0f} | {m['rps'] / n['rps']:.2f} "
          f"| {m['lat']:.2f}{p99(m)} | {n['lat']:.2f}{p99(n)} | {m['fail']} / {n['fail']} "
          f"| {m['killed']} / {n['killed']} | {m['rss']:.1f} / {n['rss']:.1f} "
          f"| {m['cpu']:.2f} | {n['cpu']:.2f} | {m['cpu'] / n['cpu']:.2f} |")
EOF
