#!/usr/bin/env bash
# The benchmarks build, from a clone of any name:
# 1. SwiftPM names the parent package (a path dependency of Benchmarks/Package.swift) after the
#    folder the checkout sits in, so a clone into an oddly named folder must still resolve: the
#    committed HEAD is cloned into `$TMPDIR/…/Net.work_clone-2` and its package graph loaded
#    (`swift package describe`, which is where a wrong package name fails: "unknown package").
# 2. The two benchmark drivers compile against this checkout (debug: the point is that they build,
#    not speed), in the scratch path the examples share (scripts/build-dependent.sh), so only the
#    benchmarks' own code is compiled here.
# Prints `benchmarks-build: N passed, M failed`.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

passed=0
failed=0
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CLONE="$WORK/Net.work_clone-2"

if git clone -q . "$CLONE" && (cd "$CLONE/Benchmarks" && swift package describe) >"$WORK/describe.log" 2>&1; then
  echo "ok   the benchmarks' package graph loads in a clone named $(basename "$CLONE")"
  passed=$((passed + 1))
else
  tail -n 20 "$WORK/describe.log" >&2
  echo "FAIL the benchmarks' package graph does not load in a clone named $(basename "$CLONE")" >&2
  failed=$((failed + 1))
fi

bin_path=$(bash scripts/build-dependent.sh --bin-path)
rm -f "$bin_path/nw-bench" "$bin_path/nio-bench"
if { bash scripts/build-dependent.sh Benchmarks --product nw-bench && bash scripts/build-dependent.sh Benchmarks --product nio-bench; } >"$WORK/build.log" 2>&1 \
  && [ -x "$bin_path/nw-bench" ] && [ -x "$bin_path/nio-bench" ]; then
  echo "ok   nw-bench and nio-bench build"
  passed=$((passed + 1))
else
  tail -n 40 "$WORK/build.log" >&2
  echo "FAIL nw-bench and nio-bench do not build" >&2
  failed=$((failed + 1))
fi
echo "benchmarks-build: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
