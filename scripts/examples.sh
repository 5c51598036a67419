#!/usr/bin/env bash
# Builds the example packages under Examples/ (each depends on this repository by path, as a user's
# package does by URL) and runs them against real peers on loopback:
#   - README.md's Swift code block must be Examples/EchoClient's main.swift, byte for byte;
#   - EchoClient  -> `nwcat listen 0 --echo`;
#   - `nwcat connect` -> EchoServer;
#   - EchoClient  -> EchoServer;
#   - EchoClient against a port nobody listens on must fail (exit non-zero).
# Ports are picked by the system (port 0) and read back, so nothing depends on a free fixed port.
# The examples and the nwcat they talk to are built by scripts/build-dependent.sh: one scratch path
# (.build-dependents) shared with the benchmarks' build check, so the dependencies they have in
# common (the Network package, SwiftNIO, BoringSSL ...) are compiled once; nwcat comes out with the
# Swift runtime linked in, the binary scripts/check-nwcat-static.sh then checks.
# Prints `examples: N passed, M failed` last; exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

BIN_PATH=$(bash scripts/build-dependent.sh --bin-path)
MESSAGE="hello"
passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
finish() {
  echo "examples: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

WORK=$(mktemp -d)
PIDS=()
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  for pid in "${PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

command -v swift >/dev/null 2>&1 || { fail "toolchain" "swift is not on PATH"; finish; }

# --- The README's usage snippet is the client example, so it cannot drift from code that builds.
readme_snippet() {  # the first ```swift block of README.md
  awk '/^```swift$/ && !seen { inside = 1; seen = 1; next } inside && /^```$/ { exit } inside { print }' README.md
}
CLIENT_MAIN=Examples/EchoClient/Sources/EchoClient/main.swift
if diff -u <(readme_snippet) "$CLIENT_MAIN" >"$WORK/readme.diff"; then
  pass "README.md's Swift block is $CLIENT_MAIN"
else
  cat "$WORK/readme.diff"
  fail "README.md's Swift block differs from $CLIENT_MAIN" "make them the same (diff above)"
fi

# --- The peer: nwcat from this package's own build (a no-op when scripts/test.sh built already).
if ! bash scripts/build-dependent.sh Examples/EchoClient --product nwcat >"$WORK/nwcat-build.log" 2>&1; then
  tail -n 40 "$WORK/nwcat-build.log"
  fail "build nwcat"
  finish
fi
NWCAT="$BIN_PATH/nwcat"

# --- Build each example into the shared scratch path.
declare -A BIN
for dir in Examples/*/; do
  name=$(basename "$dir")
  [ -f "$dir/Package.swift" ] || continue
  start=$(date +%s)
  if bash scripts/build-dependent.sh "$dir" >"$WORK/$name-build.log" 2>&1 && [ -x "$BIN_PATH/$name" ]; then
    BIN[$name]="$BIN_PATH/$name"
    pass "build $name ($(($(date +%s) - start)) s)"
  else
    tail -n 40 "$WORK/$name-build.log"
    fail "build $name"
  fi
done
if [ -z "${BIN[EchoClient]:-}" ] || [ -z "${BIN[EchoServer]:-}" ]; then
  fail "run the examples" "EchoClient and EchoServer must both build"
  finish
fi

# start_listener NAME PATTERN COMMAND...: starts COMMAND in the background with stderr in
# $WORK/NAME.err, waits until a stderr line matches PATTERN (which ends in the port number) and
# sets LISTEN_PORT. Returns non-zero when the process died or took more than 10 s.
start_listener() {
  local name=$1 pattern=$2
  shift 2
  "$@" </dev/null >"$WORK/$name.out" 2>"$WORK/$name.err" &
  local pid=$!
  PIDS+=("$pid")
  LISTEN_PID=$pid
  LISTEN_PORT=""
  for _ in $(seq 1 100); do
    LISTEN_PORT=$(sed -n "s/.*$pattern \\([0-9][0-9]*\\).*/\\1/p" "$WORK/$name.err" | head -n 1)
    [ -n "$LISTEN_PORT" ] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$WORK/$name.err"
  return 1
}

stop() {  # stop PID: ends a listener this script started
  kill -TERM "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  return 0
}

# expect_output LABEL EXPECTED INPUT COMMAND...: runs COMMAND with INPUT on standard input; passes when it
# exits 0 and prints exactly EXPECTED, else shows its stderr and the listener's.
expect_output() {
  local label=$1 expected=$2 input=$3 out rc
  shift 3
  out=$(printf '%s' "$input" | timeout 20 "$@" 2>"$WORK/client.err")
  rc=$?
  if [ "$rc" -eq 0 ] && [ "$out" = "$expected" ]; then
    pass "$label"
  else
    cat "$WORK/client.err" "$WORK/listener.err"
    fail "$label" "exit $rc, output '$out'"
  fi
}

# 1. The README program against nwcat's echo listener.
if start_listener listener "ready on port" "$NWCAT" listen 0 --echo; then
  expect_output "EchoClient -> nwcat listen --echo" "received: $MESSAGE" "" "${BIN[EchoClient]}" 127.0.0.1 "$LISTEN_PORT"
  stop "$LISTEN_PID"
else
  fail "EchoClient -> nwcat listen --echo" "nwcat did not start listening"
fi

# 2. nwcat as the client of the NWListener example (several lines, then end of input), and
# 3. both examples together, on the same server.
if start_listener listener "listening on port" "${BIN[EchoServer]}" 0; then
  expect_output "nwcat connect -> EchoServer" "$(printf 'one\ntwo\nthree')" $'one\ntwo\nthree\n' \
    "$NWCAT" connect 127.0.0.1 "$LISTEN_PORT"
  expect_output "EchoClient -> EchoServer" "received: $MESSAGE" "" "${BIN[EchoClient]}" 127.0.0.1 "$LISTEN_PORT"
  if kill -0 "$LISTEN_PID" 2>/dev/null; then
    pass "EchoServer still serving after its clients left"
  else
    cat "$WORK/listener.err"
    fail "EchoServer still serving after its clients left"
  fi
  stop "$LISTEN_PID"
else
  fail "nwcat connect -> EchoServer" "EchoServer did not start listening"
fi

# 4. Nobody listening: the client must say so and exit non-zero (the checks above rely on its
# exit status). The port comes from a listener that is stopped again, so it is free right now.
if start_listener closed "ready on port" "$NWCAT" listen 0; then
  stop "$LISTEN_PID"
  out=$(timeout 20 "${BIN[EchoClient]}" 127.0.0.1 "$LISTEN_PORT" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [[ "$out" == failed:* ]]; then
    pass "EchoClient with nobody listening exits $rc"
  else
    fail "EchoClient with nobody listening" "exit $rc, output '$out'"
  fi
else
  fail "EchoClient with nobody listening" "could not find a free port"
fi

finish
