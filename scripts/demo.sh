#!/usr/bin/env bash
# Demo: an NWListener echo server and an NWConnection client, both through nwcat.
# Builds nwcat, starts `nwcat listen 7777 --verbose --echo` in the background, pipes a line into
# `nwcat connect 127.0.0.1 7777 --verbose`, shows both sides' state changes and data, stops the
# listener. Needs only the Swift toolchain: it first installs the system packages the library
# builds against (scripts/install-deps.sh --library). Exits 0 when the line came back intact.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PORT=${DEMO_PORT:-7777}
MESSAGE="hello from nwcat"

command -v swift >/dev/null 2>&1 || { echo "demo: the Swift toolchain (swift) is not on PATH" >&2; exit 1; }

echo "== system packages the library needs"
bash scripts/install-deps.sh --library

WORK=$(mktemp -d)
LISTENER_PID=""
cleanup() {
  if [ -n "$LISTENER_PID" ] && kill -0 "$LISTENER_PID" 2>/dev/null; then
    kill -TERM "$LISTENER_PID" 2>/dev/null || true
    wait "$LISTENER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== building nwcat"
if ! swift build --product nwcat >"$WORK/build.log" 2>&1; then
  cat "$WORK/build.log" >&2
  echo "demo: building nwcat failed" >&2
  exit 1
fi
tail -n 1 "$WORK/build.log"
NWCAT="$(swift build --show-bin-path)/nwcat"

show() {  # show LABEL FILE: the file's lines, prefixed
  sed "s/^/  [$1] /" "$2"
}

echo "== starting: nwcat listen $PORT --verbose --echo"
"$NWCAT" listen "$PORT" --verbose --echo </dev/null >"$WORK/listener.out" 2>"$WORK/listener.err" &
LISTENER_PID=$!

for _ in $(seq 1 100); do
  grep -q "ready on port" "$WORK/listener.err" 2>/dev/null && break
  if ! kill -0 "$LISTENER_PID" 2>/dev/null; then
    echo "demo: the listener exited before it was ready:" >&2
    cat "$WORK/listener.err" >&2
    LISTENER_PID=""
    exit 1
  fi
  sleep 0.1
done
grep -q "ready on port" "$WORK/listener.err" || { echo "demo: the listener did not become ready in 10 s" >&2; exit 1; }

echo "== running: echo \"$MESSAGE\" | nwcat connect 127.0.0.1 $PORT --verbose"
set +e
printf '%s\n' "$MESSAGE" | timeout 20 "$NWCAT" connect 127.0.0.1 "$PORT" --verbose >"$WORK/client.out" 2>"$WORK/client.err"
CLIENT_RC=$?
set -e

sleep 0.2   # let the listener log the end of the connection
kill -TERM "$LISTENER_PID"
set +e
wait "$LISTENER_PID"
LISTENER_RC=$?
set -e
LISTENER_PID=""

echo
echo "-- client: state changes (stderr)"
show client "$WORK/client.err"
echo "-- client: received (stdout), the echo"
show client "$WORK/client.out"
echo "-- listener: state changes (stderr)"
show listener "$WORK/listener.err"
echo "-- listener: received (stdout)"
show listener "$WORK/listener.out"
echo

if [ "$CLIENT_RC" -eq 0 ] && [ "$LISTENER_RC" -eq 0 ] && [ "$(cat "$WORK/client.out")" = "$MESSAGE" ]; then
  echo "demo: OK: the line went through NWConnection -> NWListener and came back"
  exit 0
fi
echo "demo: FAILED (client exit $CLIENT_RC, listener exit $LISTENER_RC)" >&2
exit 1
