#!/usr/bin/env bash
# Renders the reference documentation (DocC) of the Network module to a static site, and checks it.
#
#   bash scripts/docs.sh [OUTPUT_DIR]      (default: .build/docs-site)
#
# Fails (non-zero) when:
#   - docc prints any warning (a ``Symbol`` or <doc:article> link that does not resolve, ...);
#   - a public symbol of Network or Security has no doc comment of its own;
#   - a docs/*.md page links to a page or heading of docs/ that does not exist;
#   - with CI=true: the articles in Sources/Network/Network.docc are not what docs/*.md generate.
# docs/*.md is the source of the articles; without CI=true this script regenerates them (commit
# the result). DOCS_HOSTING_BASE_PATH sets the site's base path (e.g. a GitHub Pages repository
# name); by default the site is served from the root of OUTPUT_DIR.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out="${1:-.build/docs-site}"
catalog=Sources/Network/Network.docc

if [ "${CI:-}" = "true" ]; then
    python3 scripts/docs_articles.py --check docs "$catalog"
else
    python3 scripts/docs_articles.py docs "$catalog"
fi

mkdir -p "$out"
out="$(cd "$out" && pwd)"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

base_path=()
if [ -n "${DOCS_HOSTING_BASE_PATH:-}" ]; then
    base_path=(--hosting-base-path "$DOCS_HOSTING_BASE_PATH")
fi

started=$(date +%s)
swift package --allow-writing-to-directory "$out" generate-documentation --target Network \
    --disable-indexing --transform-for-static-hosting "${base_path[@]}" --output-path "$out" \
    2>&1 | tee "$log"
echo "docc: $(( $(date +%s) - started )) s"

status=0
# docc's diagnostics (from symbol extraction on; the compiler's own come before and are the
# build's business) start with "warning:" or carry it after a location.
warnings=$(sed -n '/^Extracting symbol information/,$p' "$log" | grep -c -E '(^|: )(warning|error):' || true)
if [ "$warnings" -ne 0 ]; then
    echo "docs: $warnings warning(s) above; fix them" >&2
    status=1
fi

# Doc comments: the symbol graph the plugin just extracted for Network, and one for Security
# (already built, as Network depends on it; it imports nothing of this package).
bin="$(swift build --show-bin-path)"
graphs="$(mktemp -d)"
trap 'rm -f "$log"; rm -rf "$graphs"' EXIT
# The plugin writes them under the package's identity (the checkout's folder name).
network_dir=$(find "$(dirname "$bin")/extracted-symbols" -mindepth 2 -maxdepth 2 -type d -name Network \
    -printf '%T@ %p\n' | sort -n | tail -n 1 | cut -d' ' -f2-)
network_graphs=""
if [ -n "$network_dir" ]; then
    network_graphs=$(find "$network_dir" -name '*.symbols.json')
fi
if [ -z "$network_graphs" ]; then
    echo "docs: no symbol graph of Network under $(dirname "$bin")/extracted-symbols" >&2
    exit 1
fi
swift symbolgraph-extract -module-name Security -target "$(basename "$(dirname "$bin")")" \
    -I "$bin/Modules" -minimum-access-level public -skip-inherited-docs -output-dir "$graphs"
# shellcheck disable=SC2086  # one path per word
if ! python3 scripts/docs_coverage.py Sources $network_graphs "$graphs"/*.symbols.json; then
    echo "docs: public symbols without doc comments (listed above); document them" >&2
    status=1
fi

if [ "$status" -eq 0 ]; then
    echo "Documentation site: $out"
    if [ -n "${DOCS_HOSTING_BASE_PATH:-}" ]; then
        echo "It expects to be served under /$DOCS_HOSTING_BASE_PATH/: put it there on the web" \
            "server, then open /$DOCS_HOSTING_BASE_PATH/documentation/network/"
    else
        echo "View it: (cd '$out' && python3 -m http.server 8000), then open" \
            "http://localhost:8000/documentation/network/"
    fi
fi
exit "$status"
