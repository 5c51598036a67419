#!/usr/bin/env bash
# Builds the C baselines and the Swift benchmark package (release), runs every implementation x
# scenario in one run against the same C server, runs the package-benchmark suite, and writes
# Benchmarks/RESULTS.md (and results.json). See Benchmarks/README.md for the method.
#
# Knobs (environment): DURATION (s, default 3), WARMUP (s, 0.5), REPS (3), MEM_REPS (3),
# MEM_CONNS (10000), UDP_SIZES (64,1200), PORT (19000; uses PORT..PORT+9, +100, +200, +201),
# PIN (both | same | split | none; default both: pinned with REPS, then unpinned with
# UNPINNED_REPS (5) for the scenarios whose targets are per placement), ONLY (comma-separated scenarios: rr1,rr100,bulk,
# udp64-single,udp64-batch,udp1200-single,udp1200-batch,framed,ws,tls-bulk,tls-handshake,quic-bulk,quic-handshake,mem), SUITE (1 =
# also run `swift package benchmark`, default 1). The TLS server uses PORT+300 and PORT+301, the QUIC sink PORT+500.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

# The exact command, with the knobs that were set in the environment.
COMMAND="bash Benchmarks/run.sh"
for v in SUITE ONLY PIN UNPINNED_REPS PORT UDP_SIZES MEM_CONNS MEM_REPS REPS WARMUP DURATION; do
    if [ -n "${!v+x}" ]; then COMMAND="$v=${!v} $COMMAND"; fi
done

DURATION="${DURATION:-3}"
WARMUP="${WARMUP:-0.5}"
REPS="${REPS:-3}"
MEM_REPS="${MEM_REPS:-3}"
MEM_CONNS="${MEM_CONNS:-10000}"
UDP_SIZES="${UDP_SIZES:-64,1200}"
PORT="${PORT:-19000}"
PIN="${PIN:-both}"
UNPINNED_REPS="${UNPINNED_REPS:-5}"
ONLY="${ONLY:-}"
SUITE="${SUITE:-1}"

log() { printf '==> %s\n' "$*" >&2; }

for tool in gcc swift python3 taskset; do
    command -v "$tool" >/dev/null || { echo "missing tool: $tool" >&2; exit 1; }
done

# 0. OpenSSL: headers and libraries for the C TLS programs, the `openssl` tool for the
#    certificate and the `openssl s_time` baseline (Debian/Ubuntu packages; installed if missing).
deb_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
if [ ! -f /usr/include/openssl/ssl.h ] || ! command -v openssl >/dev/null; then
    missing=()
    for p in libssl-dev openssl; do deb_installed "$p" || missing+=("$p"); done
    if [ ${#missing[@]} -gt 0 ]; then
        command -v apt-get >/dev/null || { echo "install ${missing[*]} (OpenSSL headers and tool)" >&2; exit 1; }
        SUDO=()
        [ "$(id -u)" -eq 0 ] || SUDO=(sudo)
        log "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-cache show "${missing[@]}" >/dev/null 2>&1 || "${SUDO[@]}" apt-get update -qq
        "${SUDO[@]}" apt-get install -y -qq --no-install-recommends --no-upgrade "${missing[@]}" >/dev/null
    fi
fi

# python websockets for the WebSocket scenario's python client, aioquic for the QUIC scenarios'
# (the versions the tests use; aioquic goes to Debian's python, as for the tests).
if ! python3 -c 'import websockets' 2>/dev/null || { [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c 'import aioquic' 2>/dev/null; }; then
    log "installing python websockets (scripts/install-deps.sh)"
    bash "$HERE/../scripts/install-deps.sh"
fi

# 1. C baselines
log "building C programs (gcc -O2)"
mkdir -p .build/c
for src in C/*.c; do
    name="$(basename "$src" .c)"
    libs=()
    case "$name" in tls_*) libs=(-lssl -lcrypto) ;; esac
    gcc -O2 -Wall -Wextra -o ".build/c/$name" "$src" "${libs[@]}"
done

# 2. Swift: plain NIO client (must build), Network client (may not build yet)
log "building nio-bench (release)"
# The build plan caches the list of source files: after files in Sources/ were moved it names
# paths that are gone ("missing inputs"). It is cheap to make again, so always start afresh.
rm -f .build/release.yaml .build/*/release/description.json
swift build -c release --product nio-bench 2>&1 | grep -E "error|warning: unre|Compiling|Build" | grep -v "^\[" || true
[ -x .build/release/nio-bench ] || { echo "nio-bench did not build" >&2; exit 1; }

NETWORK_MISSING=""
log "building nw-bench (release; depends on ../ Network)"
if ! swift build -c release --product nw-bench >/tmp/nw-bench-build.$$ 2>&1; then
    NETWORK_MISSING="the Network client did not build ($(grep -m1 'error:' /tmp/nw-bench-build.$$ | sed 's/[`|]//g' | cut -c1-200))"
    log "$NETWORK_MISSING"
fi
rm -f /tmp/nw-bench-build.$$

# 3. package-benchmark suite (against the same C server, same placement)
SUITE_FILE="$HERE/.build/suite-summary.md"
rm -f "$SUITE_FILE"
case "$PIN" in
    same | both) SERVER_PIN=(taskset -c 0); CLIENT_PIN=(taskset -c 0) ;;
    split) SERVER_PIN=(taskset -c 1); CLIENT_PIN=(taskset -c 0) ;;
    *) SERVER_PIN=(); CLIENT_PIN=() ;;
esac
if [ "$SUITE" = "1" ] && [ -z "$NETWORK_MISSING" ] && [ -z "$ONLY" ]; then
    log "building and running the package-benchmark suite (swift package benchmark)"
    swift build -c release --product NetworkBenchmarks >/dev/null 2>&1 || true
    "${SERVER_PIN[@]}" .build/c/server --port "$PORT" --nports 10 >/dev/null 2>&1 &
    SERVER_PID=$!
    sleep 0.3
    if NETBENCH_EXTERNAL_SERVER=1 NETBENCH_PORT="$PORT" "${CLIENT_PIN[@]}" \
        swift package benchmark --format jmh --path stdout --no-progress >.build/suite.jmh 2>.build/suite.err; then
        python3 scripts/suite_summary.py .build/suite.jmh >"$SUITE_FILE"
    else
        { echo "(swift package benchmark failed:"; tail -5 .build/suite.err; echo ")"; } >"$SUITE_FILE"
    fi
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
fi

# 4. The cross-implementation measurements and the report
log "measuring (PIN=$PIN, ${DURATION}s x ${REPS} reps)"
python3 scripts/bench.py \
    --duration "$DURATION" --warmup "$WARMUP" --reps "$REPS" --mem-reps "$MEM_REPS" --unpinned-reps "$UNPINNED_REPS" \
    --mem-conns "$MEM_CONNS" --udp-sizes "$UDP_SIZES" --port "$PORT" --pin "$PIN" \
    --only "$ONLY" --network-missing "$NETWORK_MISSING" --suite "$SUITE_FILE" \
    --command "$COMMAND"
