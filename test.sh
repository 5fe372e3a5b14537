#!/usr/bin/env bash
# Moria's test command: installs the Debian packages the tests build with or use as real peers
# when they are missing, then runs `cargo test --workspace` (extra arguments go to cargo test).
#
#   ./test.sh                 install what is missing, then run every test
#   ./test.sh -p moria-http   the same, one crate
#   ./test.sh --install-only  install what is missing and stop (what .ci/run does before clippy)
#
# Installing needs root or sudo; without either it stops and names the packages to install.
set -euo pipefail
cd "$(dirname "$0")"

# What each package is for: the build links OpenSSL (pkg-config, libssl-dev); the tests talk to
# real peers: openssl s_client/x509 and curl as clients, gzip to check our compression, nginx as
# an origin and tinyproxy as a forward proxy for the HTTP client, a throwaway PostgreSQL server
# (initdb + postgres, started by the tests), SoftHSM for the PKCS#11 key tests, headless
# Chromium for the pages (file listing, chat), Prometheus (promtool too) as a real scraper,
# goaccess as a reader of access logs, python3-venv and npm for the peers below.
missing=()
command -v pkg-config >/dev/null || missing+=(pkg-config)
dpkg -s libssl-dev >/dev/null 2>&1 || missing+=(libssl-dev)
command -v openssl >/dev/null || missing+=(openssl)
command -v curl >/dev/null || missing+=(curl)
command -v nghttp >/dev/null || missing+=(nghttp2-client)
command -v gzip >/dev/null || missing+=(gzip)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v tinyproxy >/dev/null || [ -x /usr/bin/tinyproxy ] || missing+=(tinyproxy)
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || missing+=(postgresql)
[ -e /usr/lib/softhsm/libsofthsm2.so ] || missing+=(softhsm2)
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
command -v prometheus >/dev/null || missing+=(prometheus)
command -v goaccess >/dev/null || missing+=(goaccess)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
command -v npm >/dev/null || missing+=(npm)

if [ ${#missing[@]} -gt 0 ]; then
  echo "test.sh: installing the Debian packages the tests need: ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "test.sh: not root and no sudo: install ${missing[*]} (apt-get install ${missing[*]}) and run again" >&2
    exit 1
  fi
  if ! command -v apt-get >/dev/null; then
    echo "test.sh: no apt-get here: install the equivalents of ${missing[*]} and run again" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; }; then
    echo "test.sh: could not install ${missing[*]}: install them by hand and run again" >&2
    exit 1
  fi
fi

# Peers that are not Debian packages go into .tools/ (ignored by git), where the tests look
# first: Python's kosoku (Autobahn's WebSocket cases), websockets and httpx with h2 (its
# HTTP/2, what `httpx[http2]` adds) in .tools/venv, npm's ws in
# .tools/node_modules. Each is installed once; delete .tools/ to start over.
pip_packages=(kosoku websockets httpx h2)
npm_packages=(ws)
mkdir -p .tools
if [ ! -x .tools/venv/bin/python ]; then
  python3 -m venv .tools/venv
fi
want=()
for p in "${pip_packages[@]}"; do
  .tools/venv/bin/python -m pip show -q "$p" >/dev/null 2>&1 || want+=("$p")
done
if [ ${#want[@]} -gt 0 ]; then
  echo "test.sh: installing the Python packages the tests need into .tools/venv: ${want[*]}"
  .tools/venv/bin/python -m pip install -q "${want[@]}"
fi
want=()
for p in "${npm_packages[@]}"; do
  [ -e ".tools/node_modules/$p/package.json" ] || want+=("$p")
done
if [ ${#want[@]} -gt 0 ]; then
  echo "test.sh: installing the npm packages the tests need into .tools/node_modules: ${want[*]}"
  npm install --silent --no-save --prefix .tools "${want[@]}"
fi

# HTTP/2 conformance (moria-http's h2_httpwg test): httpwg-cli's `httpwg`, built once into
# ~/.cargo/bin (about 5 minutes on a 2-core machine; its own target dir, kept out of ours).
if ! command -v httpwg >/dev/null && [ ! -x "$HOME/.cargo/bin/httpwg" ]; then
  echo "test.sh: installing httpwg (cargo install --locked httpwg-cli)"
  cargo install --locked -q httpwg-cli --target-dir "${TMPDIR:-/tmp}/httpwg-build"
fi

if [ "${1:-}" = "--install-only" ]; then
  exit 0
fi
exec cargo test --workspace "$@"
