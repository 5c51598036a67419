#!/usr/bin/env bash
# Installs the system packages this package needs, on Debian/Ubuntu.
#   bash scripts/install-deps.sh            what the library needs to build, and the tests' peers
#   bash scripts/install-deps.sh --library  only what the library needs to build (the demo, and any
#                                           project that depends on Network)
# Idempotent: when everything is already installed it changes nothing and returns at once.
# Extra package names given as arguments are installed too.
set -euo pipefail

# What building the `Network` library needs: the README lists the same five.
LIBRARY_PACKAGES=(
  pkg-config       # finds the system libraries below for SwiftPM
  libgnutls28-dev  # DTLS (CGnuTLS)
  duktape-dev      # PAC files (CDuktape)
  libngtcp2-dev    # QUIC (CNGTCP2)
  libngtcp2-crypto-gnutls-dev  # QUIC's TLS 1.3 through GnuTLS (CNGTCP2)
)
TEST_PACKAGES=(
  socat      # a real, independent TCP/UDP peer for interop tests
  iproute2   # ip: network namespaces, veth, addresses for path tests
  procps     # ps/pkill-free process inspection used by test helpers
  openssl    # openssl s_server / s_client: real TLS peers, and test certificates
  libpacparser1    # pactester: an independent PAC evaluator the PAC tests compare answers with
  python3          # python3 -m http.server: serves PAC files to the PAC loading tests
  python3-pip      # pip: installs python websockets (below), the WebSocket tests' peer
  gnutls-bin       # gnutls-serv / gnutls-cli: real DTLS and TLS peers
  nftables         # nft: blackholes in network namespaces (Happy Eyeballs tests)
  dante-server     # danted: a real SOCKS5 proxy (no auth and user/password) for the proxy tests
  tinyproxy        # a real HTTP CONNECT proxy (open and BasicAuth) for the proxy tests
  curl             # an independent client through the same proxies, as the tests' anchor
  passwd           # useradd/chpasswd/userdel: a throwaway account for dante's user/password check
  dnsmasq-base     # dnsmasq: a real DNS server for the NetworkDNS resolver tests
  avahi-daemon     # Linux's own mDNS stack: the Bonjour tests run it beside ours
  avahi-utils      # avahi-browse / avahi-publish: its side of those tests
  dbus-daemon      # a private system bus for avahi (its tools talk to the daemon over D-Bus)
  libev-dev        # the event loop of ngtcp2's example client (build-ngtcp2-client.sh, below)
)
PACKAGES=("${LIBRARY_PACKAGES[@]}")
TEST_PEERS=0
# Python packages the tests' peers need (pinned; not in Debian at these versions).
PIP_PACKAGES=()
if [ "${1:-}" = "--library" ]; then
  shift
else
  PACKAGES+=("${TEST_PACKAGES[@]}")
  PIP_PACKAGES+=(websockets==17.4)  # python websockets: the WebSocket tests' server and client
  PIP_PACKAGES+=(zeroconf==0.154.0)  # python-zeroconf: the Bonjour tests' other mDNS stack
  PIP_PACKAGES+=(aioquic==1.7.2)  # aioquic: the QUIC tests' server
  TEST_PEERS=1
fi
PACKAGES+=("$@")

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

missing=()
for p in "${PACKAGES[@]}"; do
  installed "$p" || missing+=("$p")
done
# Debian's python3 (the one the tests find first on a plain PATH), else the one on PATH.
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=python3
pip_installed() { "$PYTHON" -c "import importlib.metadata as m, sys; sys.exit(m.version('${1%%==*}') != '${1##*==}')" 2>/dev/null; }
# Peers built here from Debian's sources: ngtcp2's own example client, a second QUIC stack
# for the interop tests.
build_test_peers() {
  [ "$TEST_PEERS" -eq 1 ] || return 0
  bash "$(dirname "${BASH_SOURCE[0]}")/build-ngtcp2-client.sh"
}
install_pip_packages() {
  local wanted=()
  for p in ${PIP_PACKAGES[@]+"${PIP_PACKAGES[@]}"}; do pip_installed "$p" || wanted+=("$p"); done
  [ ${#wanted[@]} -gt 0 ] || return 0
  echo "install-deps: pip installing ${wanted[*]}"
  # Debian marks its python as externally managed (PEP 668): pip then needs the override.
  "$PYTHON" -m pip install -q --disable-pip-version-check "${wanted[@]}" 2>/dev/null \
    || "${SUDO[@]}" "$PYTHON" -m pip install -q --disable-pip-version-check --break-system-packages "${wanted[@]}"
  for p in "${wanted[@]}"; do pip_installed "$p" || { echo "install-deps: $p did not install" >&2; exit 1; }; done
}
SUDO=()
[ "$(id -u)" -eq 0 ] || ! command -v sudo >/dev/null 2>&1 || SUDO=(sudo)

if [ ${#missing[@]} -eq 0 ]; then
  install_pip_packages
  build_test_peers
  echo "install-deps: all present (${PACKAGES[*]}${PIP_PACKAGES[*]+ ${PIP_PACKAGES[*]}})"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: apt-get not found; install these yourself: ${missing[*]}" >&2
  exit 1
fi
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo); else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# Daemons must not be started by package installs (no systemd on CI machines).
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee /usr/sbin/policy-rc.d >/dev/null
  "${SUDO[@]}" chmod 755 /usr/sbin/policy-rc.d
fi
# Skips the man-db trigger (about 8 s per install).
"${SUDO[@]}" rm -f /var/lib/man-db/auto-update

apt_install() {
  "${SUDO[@]}" apt-get install -y -qq --no-install-recommends --no-upgrade "${missing[@]}"
}
# apt-get update once, and only if needed: when apt does not know a missing package (fresh
# machine, empty lists), or when installing from the current lists fails (stale mirror).
updated=0
for p in "${missing[@]}"; do
  if ! apt-cache show "$p" >/dev/null 2>&1; then
    "${SUDO[@]}" apt-get update -qq
    updated=1
    break
  fi
done
if ! apt_install; then
  [ "$updated" -eq 0 ] || exit 1
  "${SUDO[@]}" apt-get update -qq
  apt_install
fi

for p in "${missing[@]}"; do
  installed "$p" || { echo "install-deps: $p did not install" >&2; exit 1; }
done
install_pip_packages
build_test_peers
echo "install-deps: done"
