#!/usr/bin/env bash
# The test suite under a sanitizer (docs/sanitizers.md):
#
#   bash scripts/sanitizers.sh thread     ThreadSanitizer, in .build-thread
#   bash scripts/sanitizers.sh address    AddressSanitizer with leak checks, in .build-address
#
# Extra arguments go to `swift test` (e.g. `--filter LockTests`). Each sanitizer has its own build
# directory, so the normal .build is kept. Fails when a test fails or when the sanitizer reports
# anything at all: a report is a bug to fix (or, for a leak, one to explain in the docs and list in
# scripts/lsan-suppressions.txt). Prints `sanitize-KIND: N passed, M failed` and the times.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

kind="${1:?usage: scripts/sanitizers.sh thread|address [swift test arguments]}"
shift
case "$kind" in
    thread)
        # halt_on_error=0: see every report of a run, not just the first.
        export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan-suppressions.txt ${TSAN_OPTIONS:-}"
        pattern='WARNING: ThreadSanitizer|ERROR: ThreadSanitizer'
        # NETWORK_TSAN: `Lock` tells the sanitizer about its hand-overs (Sources/NetworkSync).
        flags=(-Xswiftc -DNETWORK_TSAN)
        ;;
    address)
        # A 64 MiB quarantine of freed blocks (256 by default) keeps the tests that bound the
        # process's resident memory meaningful; use-after-free is still caught in that window.
        export ASAN_OPTIONS="detect_leaks=1 quarantine_size_mb=64 ${ASAN_OPTIONS:-}"
        export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt print_suppressions=1 ${LSAN_OPTIONS:-}"
        pattern='ERROR: AddressSanitizer|ERROR: LeakSanitizer'
        flags=()
        ;;
    *)
        echo "sanitizers.sh: unknown sanitizer '$kind' (thread or address)" >&2
        exit 2
        ;;
esac
# Tests whose bounds are times read this and widen them (never dropping the assertion): the
# sanitized code runs several times slower.
export NETWORK_TEST_SANITIZER="$kind"
build_path=".build-$kind"

start=$SECONDS
swift build --build-tests --sanitize="$kind" --build-path "$build_path" "${flags[@]}"
built=$((SECONDS - start))

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
# One test at a time: the sanitized code is slow enough that the suite starves itself when run in
# parallel on two cores (timing races, and resident-memory bounds that measured every test at
# once); serially it takes about two minutes.
timeout --kill-after=30 2400 swift test --skip-build --sanitize="$kind" --build-path "$build_path" "${flags[@]}" --no-parallel "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
ran=$((SECONDS - start - built))

reports=$(grep -cE "$pattern" "$log" || true)
# CI shows only the end of the log: repeat the failures there.
if grep -qE '✘ Test .* recorded an issue' "$log"; then
    echo "sanitize-$kind: the issues recorded:"
    grep -E '✘ Test .* recorded an issue' "$log" | cut -c1-400 | head -40
fi
echo "sanitize-$kind: built in $built s, tests ran in $ran s, $reports sanitizer reports, swift test exit $status"
if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ]; then
    echo "sanitize-$kind: 0 passed, 1 failed"
    exit 1
fi
echo "sanitize-$kind: 1 passed, 0 failed"
