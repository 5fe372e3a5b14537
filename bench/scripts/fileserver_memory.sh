#!/usr/bin/env bash
# Peak RSS (VmHWM) of the file server while a SIZE_MIB file (default 2048: 2 GiB) is uploaded
# with curl -T (PUT) and with curl -F (multipart POST), and while the tree holding it is
# downloaded as .tar and .tar.gz. The source file is sparse (zeros, nothing read from disk);
# the uploads are written for real, so SIZE_MIB of free disk is needed.
#
#   bench/scripts/fileserver_memory.sh [SIZE_MIB]      # uses $CARGO_TARGET_DIR (or target/)
set -euo pipefail
size_mib=${1:-2048}
target=${CARGO_TARGET_DIR:-target}
cargo build -q -p moria-examples --bin fileserver
bin=$target/debug/fileserver
work=$(mktemp -d)
mkdir "$work/root"
truncate -s "${size_mib}M" "$work/big.bin"
"$bin" --http 127.0.0.1:0 --no-https --workers 2 --upload --max-upload $((size_mib * 2))000000 \
  --root "$work/root" >"$work/banner" 2>/dev/null &
pid=$!
trap 'kill $pid; rm -rf "$work"' EXIT
until grep -q http "$work/banner" 2>/dev/null; do sleep 0.1; done
url=$(grep -o 'http://[^ ;]*' "$work/banner" | head -1)
peak() { awk '/VmHWM/ {printf "%.1f MiB", $2 / 1024}' "/proc/$pid/status"; }
echo "file server: $bin, ${size_mib} MiB"
echo "| step | HTTP | seconds | peak RSS after |"
echo "|---|---|---|---|"
echo "| start | | | $(peak) |"
step() {
  local name=$1
  shift
  local t0 code
  t0=$(date +%s.%N)
  code=$(curl -sS -o /dev/null -w '%{http_code}' "$@")
  printf '| %s | %s | %.1f | %s |\n' "$name" "$code" "$(echo "$(date +%s.%N) - $t0" | bc)" "$(peak)"
}
step "PUT (curl -T)" -T "$work/big.bin" "$url"
rm "$work/root/big.bin"
step "multipart POST (curl -F)" -F "f=@$work/big.bin" "$url"
step ".tar of the tree" "${url}?download=tar"
step ".tar.gz of the tree" "${url}?download=tar.gz"
