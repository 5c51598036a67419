#!/usr/bin/env bash
# Builds a package that depends on this one (an example under Examples/, the benchmarks), in debug
# with the Swift runtime linked in, into one scratch path that all of them share:
#   bash scripts/build-dependent.sh PACKAGE_DIR [swift build arguments]
#   bash scripts/build-dependent.sh --bin-path   prints where the products land
# e.g. `bash scripts/build-dependent.sh Examples/EchoClient --product nwcat` (a dependent's root
# builds the Network package's own executables too). Products land in $DEPENDENTS_SCRATCH/debug
# (default .build-dependents, gitignored).
# Why one scratch: each dependent is its own root package, and each scratch of its own compiled
# SwiftNIO, BoringSSL and this package again (5 to 9 minutes each on a two-core machine). With the
# same dependency versions the compile commands are the same, so the second root compiles only
# what is its own. The runtime is linked statically for all of them alike (a mix would recompile),
# which also gives the toolchain-free nwcat that scripts/check-nwcat-static.sh checks.
# SwiftPM keeps the plan of the root it built last (debug/description.json) and, given another
# root in the same scratch, reuses it: the build then "completes" without building the new root's
# products (seen with SwiftPM 6.3). Removing the cached plan makes it plan again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

package=${1:?usage: scripts/build-dependent.sh PACKAGE_DIR [swift build arguments] | --bin-path}
shift
scratch=${DEPENDENTS_SCRATCH:-.build-dependents}
if [ "$package" = --bin-path ]; then
    echo "$scratch/debug"
    exit 0
fi
rm -f "$scratch/debug/description.json"
swift build --package-path "$package" --scratch-path "$scratch" --static-swift-stdlib "$@"
