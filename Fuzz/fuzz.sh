#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer and runs them (Fuzz/README.md).
#   Fuzz/fuzz.sh build                      build every target (release, .build-fuzz)
#   Fuzz/fuzz.sh time SECONDS [TARGET...]   run each target (all by default) for SECONDS, one at a time
#   Fuzz/fuzz.sh runs COUNT [TARGET...]     run each target for COUNT executions, one at a time
#   Fuzz/fuzz.sh replay [TARGET...]         run each target over its seed corpus only (no mutation)
# TARGET is a name such as dns-message; one executable, fuzz-network, runs the target that
# NETWORK_FUZZ_TARGET names. Inputs libFuzzer finds go to .build-fuzz/corpus/TARGET, crashes to
# .build-fuzz/artifacts/. Exits non-zero when a target finds anything. Each run prints
# `fuzz TARGET: N runs in S s`. FUZZ_MAX_LEN bounds the input size (default 4096 bytes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
all=(dns-message dns-stream socks5-reply http-connect-reply pac-result dtls-cookie framer-input tlv-input coder-stream websocket-frames txt-record mdns-input quic-input quic-server-input)
# FUZZ_BUILD_PATH and FUZZ_CONFIGURATION choose where and how (default .build-fuzz, release): CI
# fuzzes briefly in AddressSanitizer's debug test build (.build-address, debug), where only the
# instrumented modules (Package.swift) compile again.
build_path=${FUZZ_BUILD_PATH:-.build-fuzz}
configuration=${FUZZ_CONFIGURATION:-release}

build() {
    NETWORK_FUZZ=1 swift build -c "$configuration" --build-path "$build_path" --product fuzz-network --sanitize=address
}

# run TARGET LIBFUZZER-OPTION...
run() {
    local target=$1; shift
    local binary="$build_path/$configuration/fuzz-network"
    mkdir -p "$build_path/corpus/$target" "$build_path/artifacts"
    local start=$SECONDS log
    log=$(mktemp)
    if ! NETWORK_FUZZ_TARGET=$target "$binary" "$build_path/corpus/$target" "Fuzz/Corpus/$target" \
        -max_len="${FUZZ_MAX_LEN:-4096}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$build_path/artifacts/$target-" "$@" > "$log" 2>&1; then
        tail -n 60 "$log"
        rm -f "$log"
        echo "fuzz $target: FOUND SOMETHING (input in $build_path/artifacts/)" >&2
        return 1
    fi
    local runs
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    rm -f "$log"
    echo "fuzz $target: $runs runs in $((SECONDS - start)) s"
}

command=${1:-}
shift || true
case "$command" in
build) build ;;
time | runs)
    amount=$1; shift
    targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
    build
    failed=0
    for target in "${targets[@]}"; do
        if [ "$command" = time ]; then run "$target" -max_total_time="$amount" || failed=1
        else run "$target" -runs="$amount" || failed=1; fi
    done
    exit $failed
    ;;
replay)
    targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
    build
    for target in "${targets[@]}"; do run "$target" -runs=0; done
    ;;
*) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
