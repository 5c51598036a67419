#!/usr/bin/env bash
# THE test command: installs what the tests need, builds everything, runs every test.
# Extra arguments go to `swift test` (e.g. `bash scripts/test.sh --filter NetworkSystemTests`);
# with arguments, only `swift test` runs, not the checks after it.
# Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
swift build --build-tests
swift test --skip-build "$@"
[ $# -eq 0 ] || exit 0

# Checks beyond `swift test`: each prints `NAME: N passed, M failed` and exits non-zero on failure.
bash scripts/check-log-secrets.sh
bash scripts/check-missing-system-libraries.sh
bash scripts/docs.sh
bash scripts/examples.sh
bash scripts/check-nwcat-static.sh
bash scripts/check-benchmarks-build.sh
