#!/usr/bin/env bash
# What OpenSSL itself keeps per idle TLS 1.3 server connection (the floor under any server's
# idle-https row): builds openssl_floor.c against the system's libssl with a fresh P-256
# certificate like the fileserver's, and runs it.
#
#   bench/scripts/openssl_floor.sh [N]      # N kept connections, default 2000
#
# Needs gcc and the Debian package libssl-dev (and openssl for the certificate).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
for tool in gcc openssl; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install $tool" >&2; exit 1; }
done
[ -f /usr/include/openssl/ssl.h ] || { echo "missing OpenSSL headers: apt-get install libssl-dev" >&2; exit 1; }
work="$here/../../target/openssl-floor"
mkdir -p "$work"
gcc -O2 -Wall -Wextra -o "$work/openssl_floor" "$here/openssl_floor.c" -lssl -lcrypto
cd "$work"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout key.pem \
  -out cert.pem -days 1 -subj /CN=localhost 2>/dev/null
./openssl_floor "${1:-2000}"
