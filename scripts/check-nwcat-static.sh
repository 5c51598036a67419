#!/usr/bin/env bash
# Checks that the nwcat from scripts/build-nwcat.sh runs on a machine without the Swift toolchain:
#   - ldd lists no Swift runtime library (libswiftCore, Foundation, Dispatch, BlocksRuntime ...),
#     nothing from the toolchain's folder, and nothing "not found";
#   - with the toolchain hidden (a private mount namespace lays an empty tmpfs over it) and an
#     empty environment, `nwcat --help` runs, and a TCP and a TLS echo over 127.0.0.1 work.
# Needs root or unprivileged user namespaces (unshare). Prints `nwcat-static: N passed, M failed`
# last; exits non-zero when anything failed.
#
#   bash scripts/check-nwcat-static.sh [BINARY]   (default: build it with scripts/build-nwcat.sh)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
finish() {
  echo "nwcat-static: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
}

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

for tool in swift ldd unshare mount timeout; do
  command -v "$tool" >/dev/null 2>&1 || { fail "tool $tool" "not on PATH"; finish; }
done

if [ $# -ge 1 ]; then
  cp "$1" "$WORK/nwcat"
elif bash scripts/build-nwcat.sh "$WORK/nwcat" >"$WORK/build.log" 2>&1; then
  grep '^build-nwcat:' "$WORK/build.log" | grep -v '^build-nwcat: ldd'
else
  tail -n 40 "$WORK/build.log"
  fail "build a static nwcat"
  finish
fi

# Where the toolchain lives: the folder holding usr/bin/swift, and its runtime library folder.
TOOLCHAIN=$(cd "$(dirname "$(readlink -f "$(command -v swift)")")/../.." && pwd)
RUNTIME=$(swift -print-target-info | sed -n '/"runtimeLibraryPaths"/,/]/s/^ *"\(\/[^"]*\)".*/\1/p' | head -n 1)
if [ -z "$RUNTIME" ] || [ ! -e "$RUNTIME/libswiftCore.so" ]; then
  fail "find libswiftCore.so" "not in '$RUNTIME' (from swift -print-target-info)"
  finish
fi
case "$RUNTIME" in
  "$TOOLCHAIN"/*) ;;
  *) fail "runtime inside the toolchain" "$RUNTIME is not under $TOOLCHAIN; hiding $TOOLCHAIN would prove nothing"; finish ;;
esac
echo "toolchain: $TOOLCHAIN (runtime libraries in $RUNTIME)"

# --- What the dynamic linker will load.
ldd "$WORK/nwcat" >"$WORK/ldd.txt" 2>&1
sed 's/^/  /' "$WORK/ldd.txt"
swift_libs=$(grep -E 'libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime|libicu|libXCTest' "$WORK/ldd.txt")
if [ -z "$swift_libs" ]; then pass "ldd lists no Swift runtime library"; else fail "ldd lists Swift runtime libraries" "$swift_libs"; fi
if grep -qF "$TOOLCHAIN/" "$WORK/ldd.txt"; then fail "ldd loads nothing from $TOOLCHAIN"; else pass "ldd loads nothing from $TOOLCHAIN"; fi
if grep -q 'not found' "$WORK/ldd.txt"; then fail "ldd finds every library" "$(grep 'not found' "$WORK/ldd.txt")"; else pass "ldd finds every library"; fi

# --- Run it with the toolchain hidden. The inner script prints PASS/FAIL lines of its own.
cat >"$WORK/inside.sh" <<'INSIDE'
set -u
cd "$WORK"
run() { env -i PATH=/usr/bin:/bin "$@"; }   # no toolchain on PATH, no LD_LIBRARY_PATH
mount -t tmpfs none "$TOOLCHAIN" || { echo "FAIL hide the toolchain: mount failed"; exit 0; }
if [ ! -e "$RUNTIME/libswiftCore.so" ] && ! run sh -c 'command -v swift' >/dev/null; then
  echo "PASS toolchain hidden (no swift on PATH, no $RUNTIME/libswiftCore.so)"
else
  echo "FAIL toolchain hidden"
fi

if run ./nwcat --help >help.txt 2>&1 && grep -q 'connect' help.txt; then
  echo "PASS nwcat --help without the toolchain"
else
  echo "FAIL nwcat --help without the toolchain: $(head -c 300 help.txt)"
fi

# echo_check NAME LISTEN_ARGS CONNECT_ARGS...: `nwcat listen 0 --echo LISTEN_ARGS`, then a line
# through `nwcat connect 127.0.0.1 PORT CONNECT_ARGS` ("PIN" in CONNECT_ARGS becomes the printed pin).
echo_check() {
  local name=$1 listen_args=$2
  shift 2
  # shellcheck disable=SC2086 # listen_args is a word list on purpose
  run ./nwcat listen 0 --echo $listen_args </dev/null >"$name.out" 2>"$name.err" &
  local pid=$! port="" pin=""
  for _ in $(seq 1 100); do
    port=$(sed -n 's/.*ready on port \([0-9][0-9]*\).*/\1/p' "$name.err" | head -n 1)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "FAIL $name echo: the listener did not start: $(head -c 300 "$name.err")"
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    return
  fi
  pin=$(sed -n 's/.*--pin \([0-9a-f]\{64\}\).*/\1/p' "$name.err" | head -n 1)
  local args=() a
  for a in "$@"; do [ "$a" = PIN ] && args+=("$pin") || args+=("$a"); done
  local out rc
  out=$(printf 'static hello\n' | run timeout 20 ./nwcat connect 127.0.0.1 "$port" "${args[@]}" 2>"$name-client.err")
  rc=$?
  if [ "$rc" -eq 0 ] && [ "$out" = "static hello" ]; then
    echo "PASS $name echo over 127.0.0.1 without the toolchain"
  else
    echo "FAIL $name echo: exit $rc, output '$out': $(head -c 300 "$name-client.err")"
  fi
  kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
}
echo_check tcp ""
echo_check tls "--tls" --tls --pin PIN
echo DONE
INSIDE

# Root gets a private mount namespace; anyone else maps themselves to root in a user namespace.
UNSHARE=(unshare -m)
[ "$(id -u)" -eq 0 ] || UNSHARE=(unshare -r -m)
export WORK TOOLCHAIN RUNTIME   # read by the inner script
"${UNSHARE[@]}" bash "$WORK/inside.sh" >"$WORK/inside.txt" 2>&1
grep -vx DONE "$WORK/inside.txt"
inside_pass=$(grep -c '^PASS' "$WORK/inside.txt")
inside_fail=$(grep -c '^FAIL' "$WORK/inside.txt")
passed=$((passed + inside_pass))
failed=$((failed + inside_fail))
# Without its last line the inner script died on the way (e.g. unshare was refused).
grep -qx DONE "$WORK/inside.txt" || fail "hidden-toolchain run" "the checks in the mount namespace did not finish"

finish
