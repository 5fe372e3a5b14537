#!/usr/bin/env bash
# Instructions per keep-alive request, counted by callgrind: deterministic where wall-clock
# A/Bs on a shared machine are not. The server (release, one worker) runs under
# `valgrind --tool=callgrind`; a Python client opens CONNS keep-alive connections, asks once on
# each (warm-up), then the counters are zeroed, REQUESTS more requests go out round-robin
# (DEPTH of them per write on each connection, each answer read whole), and the counters are
# dumped. Prints the instructions of the whole process for those requests and per request; the
# profile stays in the work directory for `callgrind_annotate`.
#
#   bench/scripts/callgrind.sh [http|https] [REQUESTS=4000] [CONNS=10] [BINARY|nginx] [DEPTH=1]
#   bench/scripts/callgrind.sh hello [REQUESTS] [CONNS] [BINARY] [DEPTH=1]
#   bench/scripts/callgrind.sh tls-full|tls-resumed [HANDSHAKES=400] [CONNS] [BINARY|nginx]
#
# http and https fetch the 1312-byte file: BINARY defaults to target/release/fileserver (built
# here); pass another build to compare, or `nginx` to count nginx's instructions the same way
# tls-full and tls-resumed count instructions per TLS 1.3 handshake instead: every request on a
# new connection with `Connection: close` (what `compare --scenario tls-handshake` loads),
# offering no session (full) or the ticket of the connection before (resumed; a handshake that
# does not resume stops the run); CONNS is unused. Both servers get one certificate made here:
# P-256, or RSA-2048 with KEY=rsa2048 in the environment (the two keys of
# `compare --scenario tls-handshake`).
# (one process: `master_process off`, one worker, sendfile, TLS 1.3; needs the Debian package
# nginx-light or nginx). hello asks `GET /`
# of a server taking `--listen ADDR --workers 1`: BINARY defaults to target/release/hello
# (built here); target/release/peer_minihttp is may_minihttp's.
# Under valgrind the fileserver resolves paths by canonicalisation on the offload pool
# (valgrind does not know `openat2`): the same instructions in every build, not in nginx's.
# CALLGRIND_OPTS adds valgrind options, e.g. `--dump-instr=yes` for bench/scripts/asm_costs.py
# (instructions per machine instruction of one function).
set -euo pipefail
SCHEME=${1:-http}
REQUESTS=${2:-4000}
CONNS=${3:-10}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DEFAULT_BIN=fileserver
[ "$SCHEME" = hello ] && DEFAULT_BIN=hello
BIN=${4:-$ROOT/target/release/$DEFAULT_BIN}
DEPTH=${5:-1}
P_HTTP=18280 P_HTTPS=18643

need() { # command package
  command -v "$1" >/dev/null && return
  if [ "$(id -u)" != 0 ]; then
    echo "missing $1: apt-get install $2" >&2
    exit 1
  fi
  echo "installing $2" >&2
  if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq >&2; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >&2
}
need valgrind valgrind
need python3 python3-minimal
if [ $# -lt 4 ]; then
  case $SCHEME in
    hello) cargo build --release -q -p moria-bench --bin hello ;;
    *) cargo build --release -q -p moria-examples --bin fileserver ;;
  esac
fi

WORK=$(mktemp -d /tmp/moria-callgrind.XXXXXX)
mkdir -p "$WORK/www"
head -c 1312 /dev/urandom >"$WORK/www/file1312"
need openssl openssl
case ${KEY:-p256} in
  p256) NEWKEY=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1) ;;
  rsa2048) NEWKEY=(-newkey rsa:2048) ;;
  *) echo "KEY must be p256 or rsa2048, not $KEY" >&2; exit 1 ;;
esac
openssl req -x509 "${NEWKEY[@]}" -nodes -days 1 -subj /CN=localhost \
  -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
if [ "$BIN" = nginx ]; then
  need nginx nginx-light
  cat >"$WORK/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000000;
  ssl_protocols TLSv1.3;
  ssl_certificate $WORK/cert.pem;
  ssl_certificate_key $WORK/key.pem;
  client_body_temp_path $WORK;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:$P_HTTP;
    listen 127.0.0.1:$P_HTTPS ssl;
    root $WORK/www;
  }
}
CONF
  SERVER=(nginx -p "$WORK" -c "$WORK/nginx.conf")
elif [ "$SCHEME" = hello ]; then
  SERVER=("$BIN" --listen 127.0.0.1:$P_HTTP --workers 1)
else
  SERVER=("$BIN" --root "$WORK/www" --http 127.0.0.1:$P_HTTP --https 127.0.0.1:$P_HTTPS --workers 1
    --cert "$WORK/cert.pem" --key "$WORK/key.pem")
fi
valgrind --tool=callgrind ${CALLGRIND_OPTS:-} --callgrind-out-file="$WORK/callgrind.out" "${SERVER[@]}" \
  >"$WORK/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
PORT=$P_HTTP
case $SCHEME in https | tls-*) PORT=$P_HTTPS ;; esac

python3 - "$SCHEME" "$PORT" "$REQUESTS" "$CONNS" "$PID" "$DEPTH" <<'EOF'
import socket, ssl, subprocess, sys, time
scheme, port, total, conns, pid, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], int(sys.argv[6])
path = b"/" if scheme == "hello" else b"/file1312"
request = b"GET " + path + b" HTTP/1.1\r\nHost: bench\r\n\r\n"

def connect():
    for _ in range(600):  # valgrind starts slowly: up to a minute
        try:
            s = socket.create_connection(("127.0.0.1", port))
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("the server did not start listening")
    if scheme == "https":
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(s)
    return s

pending = {}

def answer(s):
    """Reads one whole answer from `s`, keeping what follows it for the next call."""
    buf = pending.get(s, b"")
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("connection closed before an answer")
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    if not head.startswith(b"HTTP/1.1 200"):
        sys.exit("unexpected answer: %r" % head[:80])
    length = next(int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("connection closed inside an answer")
        body += chunk
    pending[s] = body[length:]

tls13 = ssl.create_default_context()
tls13.check_hostname = False
tls13.verify_mode = ssl.CERT_NONE
tls13.minimum_version = ssl.TLSVersion.TLSv1_3

def handshakes(count, session=None):
    """`count` requests, each on a new TLS connection closed by the server after its answer;
    returns the last session (resumed: each connection offers the one before's ticket)."""
    for _ in range(count):
        s = tls13.wrap_socket(socket.create_connection(("127.0.0.1", port)), session=session)
        s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
        got = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        if not got.startswith(b"HTTP/1.1 200"):
            sys.exit("unexpected answer: %r" % got[:80])
        if scheme == "tls-resumed":
            if session is not None and not s.session_reused:
                sys.exit("a handshake did not resume")
            session = s.session
        try:
            s.unwrap()  # close_notify: a session freed without one is not resumable
        except (OSError, ValueError):
            pass
        s.close()
    return session

if scheme.startswith("tls-"):
    connect().close()
    warm = handshakes(2)
    subprocess.run(["callgrind_control", "-z", pid], check=True, stdout=subprocess.DEVNULL)
    handshakes(total, warm)
    subprocess.run(["callgrind_control", "-d", pid], check=True, stdout=subprocess.DEVNULL)
    sys.exit(0)

def round_trip(sockets):
    for s in sockets:
        s.sendall(request * depth)
    for s in sockets:
        for _ in range(depth):
            answer(s)

sockets = [connect() for _ in range(conns)]
round_trip(sockets)
subprocess.run(["callgrind_control", "-z", pid], check=True, stdout=subprocess.DEVNULL)
for _ in range(total // (conns * depth)):
    round_trip(sockets)
subprocess.run(["callgrind_control", "-d", pid], check=True, stdout=subprocess.DEVNULL)
EOF

for _ in $(seq 100); do [ -s "$WORK/callgrind.out.1" ] && break; sleep 0.1; done
TOTAL=$(callgrind_annotate "$WORK/callgrind.out.1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
if [[ $SCHEME == tls-* ]]; then
  echo "$SCHEME: $TOTAL instructions for $REQUESTS handshakes ($((TOTAL / REQUESTS)) per" \
    "handshake, each with one request); profile: $WORK/callgrind.out.1"
  exit 0
fi
REQS=$(( (REQUESTS / (CONNS * DEPTH)) * CONNS * DEPTH ))
echo "$SCHEME: $TOTAL instructions for $REQS keep-alive requests over $CONNS connections," \
  "$DEPTH per write ($((TOTAL / REQS)) per request); profile: $WORK/callgrind.out.1"
