#!/usr/bin/env bash
# Demo: the WWDC 2025 story of the structured-concurrency API, through `nwcat demo`: a
# NetworkListener advertises a game by Bonjour with Coder over TLS, a NetworkBrowser finds it, a
# NetworkConnection plays a few messages; every step is printed. Needs only the Swift toolchain:
# it first installs the system packages the library builds against (install-deps.sh --library).
# Exits 0 when the game was played.
#
# Bonjour speaks multicast DNS on the interfaces it finds. On your machine that is what you want
# (other machines on the network could see the demo's service while it runs, for about a
# second). Under CI (CI=true), or with DEMO_NAMESPACE=1, it runs inside a network namespace of
# its own whose loopback carries multicast, so nothing leaves the machine (that needs root).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

command -v swift >/dev/null 2>&1 || { echo "demo: the Swift toolchain (swift) is not on PATH" >&2; exit 1; }

echo "== system packages the library needs"
bash scripts/install-deps.sh --library

WORK=$(mktemp -d)
NAMESPACE=""
cleanup() {
  if [ -n "$NAMESPACE" ]; then ip netns del "$NAMESPACE" 2>/dev/null || true; fi
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

RUN=()
if [ "${CI:-}" = "true" ] || [ "${DEMO_NAMESPACE:-}" = "1" ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null 2>&1; then
    echo "demo: running inside a network namespace (CI) needs root and ip (iproute2)" >&2
    exit 1
  fi
  NAMESPACE="nwdemo$$"
  ip netns add "$NAMESPACE"
  ip -n "$NAMESPACE" link set lo up
  ip -n "$NAMESPACE" link set lo multicast on
  # With the source given: lo's only address has host scope, which the kernel does not pick as
  # the source of a multicast on its own.
  ip -n "$NAMESPACE" route add 224.0.0.0/4 dev lo src 127.0.0.1
  RUN=(ip netns exec "$NAMESPACE")
  echo "== running: nwcat demo (inside network namespace $NAMESPACE: its mDNS stays on that namespace's loopback)"
else
  echo "== running: nwcat demo (its Bonjour service is advertised on this machine's interfaces while it runs)"
fi
echo
set +e
"${RUN[@]}" "$NWCAT" demo --timeout 30
STATUS=$?
set -e
echo
if [ "$STATUS" -eq 0 ]; then
  echo "demo: OK: a NetworkListener advertised by Bonjour was found by a NetworkBrowser and played over Coder and TLS"
  exit 0
fi
echo "demo: FAILED (nwcat demo exit $STATUS)" >&2
exit 1
