#!/usr/bin/env bash
# Builds a release nwcat that can be copied to a machine without the Swift toolchain.
#
#   bash scripts/build-nwcat.sh [OUTPUT]     (default OUTPUT: .build/nwcat-static)
#
# The Swift runtime, Foundation and Dispatch are linked in statically (--static-swift-stdlib), and
# so are SwiftNIO and BoringSSL. Four system libraries stay dynamic, so the target machine needs
# their runtime packages (Debian/Ubuntu names):
#   libgnutls30     DTLS (and `Security` certificate checks)
#   libduktape207   PAC files
#   libngtcp2-9, libngtcp2-crypto-gnutls2   QUIC
# plus glibc and libstdc++ (libstdc++6), which every Debian/Ubuntu system has. The copy keeps its
# symbols (readable crash reports); `strip` takes it from about 116 MB to about 67 MB and it still runs.
# The release build uses its own scratch path (.build-release, gitignored) so it does not clobber
# the debug build in .build. The last lines printed are `ldd OUTPUT`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

OUTPUT=${1:-.build/nwcat-static}
SCRATCH=${NWCAT_RELEASE_SCRATCH_PATH:-.build-release}
FLAGS=(-c release --product nwcat --static-swift-stdlib --scratch-path "$SCRATCH")

start=$(date +%s)
swift build "${FLAGS[@]}"
echo "build-nwcat: release build took $(($(date +%s) - start)) s"

mkdir -p "$(dirname "$OUTPUT")"
cp "$(swift build "${FLAGS[@]}" --show-bin-path)/nwcat" "$OUTPUT"
echo "build-nwcat: $OUTPUT ($(du -h "$OUTPUT" | cut -f1))"
echo "build-nwcat: ldd $OUTPUT"
ldd "$OUTPUT"
