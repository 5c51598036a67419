#!/usr/bin/env bash
# THE test command: installs what the tests need, builds everything, runs every test.
# Extra arguments go to `swift test` (e.g. `bash scripts/test.sh --filter NetworkSystemTests`).
# Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
swift build --build-tests
swift test --skip-build "$@"
bash scripts/check-log-secrets.sh
