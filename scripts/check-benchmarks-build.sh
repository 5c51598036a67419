#!/usr/bin/env bash
# The benchmarks build from a clone of any name: SwiftPM names the parent package (a path
# dependency of Benchmarks/Package.swift) after the folder the checkout sits in, so a clone
# into an oddly named folder must still resolve and build. Clones the committed HEAD into
# `$TMPDIR/…/Net.work_clone-2`, builds the two benchmark drivers (debug: the point is that the
# package graph resolves and compiles, not speed). Prints `benchmarks-build: N passed, M failed`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CLONE="$WORK/Net.work_clone-2"
git clone -q . "$CLONE"

set +e
(cd "$CLONE/Benchmarks" && swift build --product nw-bench && swift build --product nio-bench) >"$WORK/build.log" 2>&1
rc=$?
set -e
if [ "$rc" -eq 0 ] && [ -x "$CLONE/Benchmarks/.build/debug/nw-bench" ] && [ -x "$CLONE/Benchmarks/.build/debug/nio-bench" ]; then
  echo "ok   Benchmarks build in a clone named $(basename "$CLONE")"
  echo "benchmarks-build: 1 passed, 0 failed"
  exit 0
fi
tail -n 40 "$WORK/build.log" >&2
echo "FAIL Benchmarks do not build in a clone named $(basename "$CLONE")" >&2
echo "benchmarks-build: 0 passed, 1 failed"
exit 1
