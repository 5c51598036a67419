#!/usr/bin/env bash
# What a user sees when a system library the package builds against is missing: for each of the
# package's system-library targets, a throwaway package builds that target (the real module map
# and shim, copied) with the library's header and pkg-config file hidden (a private mount
# namespace; nothing on the machine changes). The build must fail, and its output must name the
# Debian package twice: SwiftPM's `providers:` hint and the shim's #error.
# Needs root (unshare -m). Prints `missing-system-libraries: N passed, M failed`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)

if ! unshare -m true 2>/dev/null; then
  echo "missing-system-libraries: needs root for a private mount namespace (unshare -m)" >&2
  exit 1
fi
PCDIR=$(pkg-config --variable pc_path pkg-config 2>/dev/null | cut -d: -f1)
[ -d "$PCDIR" ] || PCDIR=/usr/lib/$(gcc -dumpmachine)/pkgconfig

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0

# check TARGET PKGCONFIG_NAME DEBIAN_PACKAGE[,MORE] HEADER_PATH...: HEADER_PATHs are hidden (files or
# folders under /usr/include). With several packages, the messages name the first one first.
check() {
  local target=$1 pcname=$2 packages=$3; shift 3
  local debian=${packages%%,*}
  local providers
  providers=$(printf '"%s", ' ${packages//,/ }); providers=${providers%, }
  local pkg="$WORK/$target"
  mkdir -p "$pkg/Sources/Use" "$pkg/fakeinc" "$pkg/fakepc"
  cp -r "$ROOT/Sources/$target" "$pkg/Sources/"
  # The target's declaration, as the root manifest has it (pkgConfig and providers).
  cat >"$pkg/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription
let package = Package(name: "probe", targets: [
    .systemLibrary(name: "$target", path: "Sources/$target", pkgConfig: "$pcname", providers: [.apt([$providers])]),
    .executableTarget(name: "Use", dependencies: ["$target"]),
])
MANIFEST
  grep -q "name: \"$target\", path: \"Sources/$target\", pkgConfig: \"$pcname\"" "$ROOT/Package.swift" || {
    echo "FAIL $target: Package.swift no longer declares it with pkgConfig \"$pcname\"" >&2; failed=$((failed + 1)); return; }
  grep -A1 "name: \"$target\"" "$ROOT/Package.swift" | grep -qF "providers: [.apt([$providers])]" || {
    echo "FAIL $target: Package.swift's providers for it are not [.apt([$providers])]" >&2; failed=$((failed + 1)); return; }
  printf 'import %s\nprint("built")\n' "$target" >"$pkg/Sources/Use/main.swift"
  # Copies of /usr/include and the pkg-config folder without this library.
  cp -a /usr/include/. "$pkg/fakeinc/"
  cp -a "$PCDIR/." "$pkg/fakepc/"
  local h
  for h in "$@"; do rm -rf "$pkg/fakeinc/$h"; done
  rm -f "$pkg/fakepc/$pcname.pc"
  set +e
  unshare -m sh -c "mount --bind '$pkg/fakeinc' /usr/include && mount --bind '$pkg/fakepc' '$PCDIR' && cd '$pkg' && swift build" >"$pkg/out.txt" 2>&1
  local rc=$?
  set -e
  local ok=1
  [ "$rc" -ne 0 ] || { echo "FAIL $target: the build succeeded without the library" >&2; ok=0; }
  grep -q "apt-get install $debian" "$pkg/out.txt" || { echo "FAIL $target: no providers hint naming $debian" >&2; ok=0; }
  grep -q "error: .*needs Debian/Ubuntu's $debian" "$pkg/out.txt" || { echo "FAIL $target: no #error naming $debian" >&2; ok=0; }
  if [ "$ok" -eq 1 ]; then
    echo "ok   $target without $debian: $(grep -m1 -o "error: .*needs Debian/Ubuntu's $debian[^\"]*" "$pkg/out.txt")"
    passed=$((passed + 1))
  else
    sed 's/^/    /' "$pkg/out.txt" | head -40 >&2
    failed=$((failed + 1))
  fi
}

check CDuktape duktape duktape-dev duktape.h duk_config.h
check CGnuTLS gnutls libgnutls28-dev gnutls
check CNGTCP2 libngtcp2_crypto_gnutls libngtcp2-dev,libngtcp2-crypto-gnutls-dev ngtcp2

echo "missing-system-libraries: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
