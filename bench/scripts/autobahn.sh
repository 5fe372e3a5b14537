#!/usr/bin/env bash
# Autobahn's whole WebSocket case set through kosoku, the performance group 9.* included:
# against the echo server with permessage-deflate offered (and groups 12/13 again without
# context takeover), and driving Moria's client. The test suite runs the same minus 9.*.
# Needs .tools/ (./test.sh --install-only). Prints each run's verdict counts and its time.
#
#   bench/scripts/autobahn.sh            # release build (what the timing in the note is)
#   PROFILE=dev bench/scripts/autobahn.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
profile=${PROFILE:-release}
flags=()
[[ $profile == release ]] && flags=(--release)
cargo test "${flags[@]}" -p moria-http --test http --no-run
for t in every_case_passes_against_the_echo_server_with_deflate_offered \
         the_compression_cases_pass_without_context_takeover \
         every_case_passes_driving_the_client_with_deflate_offered; do
    start=$(date +%s)
    MORIA_AUTOBAHN_FULL=1 cargo test "${flags[@]}" -q -p moria-http --test http \
        "ws_autobahn::$t" -- --exact --nocapture 2>&1 | grep -E "kosoku|test result|panicked|cases not"
    echo "$t: $(( $(date +%s) - start )) s"
done
