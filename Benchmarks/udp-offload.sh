#!/usr/bin/env bash
# UDP offload, in one run, 1200-byte datagrams over 127.0.0.1, pinned (everything on CPU 0) and
# unpinned:
#   send     C send() one by one, C sendmmsg, C sendmsg + UDP_SEGMENT, SwiftNIO batched writes,
#            Network batch { }, to the UDP sink of C/server.c (which counts what arrived)
#   receive  a UDP_SEGMENT flood (C/udp_flood.c) into C recvmmsg (without and with UDP_GRO),
#            SwiftNIO (vector reads of 64), Network's NWListener and one NWConnection
# and writes the section "UDP offload: batch with GSO, receive with GRO" of Benchmarks/RESULTS.md
# (the other sections are left as they are) plus the raw samples in Benchmarks/udp-offload.json.
#
# Knobs (environment): DURATION (s, default 3), WARMUP (s, 0.5), REPS (3, per placement),
# PORT (19000; the server uses PORT, PORT+100, PORT+200, PORT+201; the receivers bind UDP PORT,
# the flood UDP PORT+1), PIN (both | same | none; default both). Takes about 5 minutes after the
# build.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
cd "$HERE"

# The exact command, with the knobs that were set in the environment.
COMMAND="bash Benchmarks/udp-offload.sh"
for v in PIN PORT REPS WARMUP DURATION; do
    if [ -n "${!v+x}" ]; then COMMAND="$v=${!v} $COMMAND"; fi
done
DURATION="${DURATION:-3}"
WARMUP="${WARMUP:-0.5}"
REPS="${REPS:-3}"
PORT="${PORT:-19000}"
PIN="${PIN:-both}"

log() { printf '==> %s\n' "$*" >&2; }

for tool in gcc swift python3 taskset; do
    command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 1; }
done

log "building the C programs (gcc -O2)"
mkdir -p .build/c
for name in server client_blocking udp_flood udp_recv; do
    gcc -O2 -Wall -Wextra -o ".build/c/$name" "C/$name.c"
done

# One product per invocation: `swift build` builds only the last of several --product options.
log "building nio-bench (release)"
# As run.sh: the cached build plan can name source files that were moved since; it is cheap to redo.
rm -f .build/release.yaml .build/*/release/description.json
swift build -c release --product nio-bench 2>&1 | grep -E "error|warning: unre" || true
[ -x .build/release/nio-bench ] || { echo "nio-bench did not build" >&2; exit 1; }
NETWORK_MISSING=""
log "building nw-bench (release; depends on ../ Network)"
BUILD_LOG="$(mktemp)"
if ! swift build -c release --product nw-bench >"$BUILD_LOG" 2>&1; then
    NETWORK_MISSING="the Network client did not build ($(grep -m1 'error:' "$BUILD_LOG" | sed 's/[`|]//g' | cut -c1-200))"
    log "$NETWORK_MISSING"
fi
rm -f "$BUILD_LOG"

REVISION="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$ROOT" status --porcelain -- Sources 2>/dev/null)" ]; then REVISION="$REVISION plus uncommitted changes in Sources/"; fi

log "measuring (PIN=$PIN, ${WARMUP}s + ${DURATION}s x ${REPS} reps per placement)"
python3 scripts/udp_offload.py --duration "$DURATION" --warmup "$WARMUP" --reps "$REPS" --port "$PORT" --pin "$PIN" \
    --network-missing "$NETWORK_MISSING" --command "$COMMAND" --revision "$REVISION" \
    --results "$HERE/RESULTS.md" --json "$HERE/udp-offload.json"
